import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
        try await unsafeReadAsync { db in
            try Bool.fetchOne(db, sql: "SELECT folds_editions FROM album_folding WHERE name_key = ?", arguments: [user.key])
                .map { AlbumFolding(foldsEditions: $0) } ?? .editions
        }
    }

    public func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date) async throws(SourceError) -> Bool {
        try await writeAsync { db in
            let kept = try Row.fetchOne(db, sql: "SELECT folds_editions, version FROM album_folding WHERE name_key = ?", arguments: [user.key])
            let current = kept.map { AlbumFolding(foldsEditions: $0[0]) } ?? .editions
            guard current != folding else { return false }
            try db.execute(sql: """
                INSERT INTO album_folding (name_key, folds_editions, version) VALUES (?, ?, 1)
                ON CONFLICT(name_key) DO UPDATE SET folds_editions = excluded.folds_editions, version = album_folding.version + 1
                """, arguments: [user.key, folding.foldsEditions])
            if try Self.userID(of: user, in: db) != nil {
                _ = try SQLiteJobQueue.enqueue(.albumFolding, for: user, key: user.key, payload: "", machine: nil, notBefore: nil, at: now, in: db)
            }
            return true
        }
    }

    public func countAgain(_ user: Username, after week: Int64?, fence: JobFence?) async throws(SourceError) -> CountedAgain {
        try await writeAsync { db in
            try Self.hold(fence, in: db)
            let version = try Int64.fetchOne(db, sql: "SELECT version FROM album_folding WHERE name_key = ?", arguments: [user.key]) ?? 0
            guard let id = try Self.userID(of: user, in: db) else { return CountedAgain(lastWeek: nil, version: version) }
            let folding = try WeeklyRollup.folding(userID: id, in: db)
            // Every week with a play has artist rows (kind 1).
            let weeks = try Int64.fetchAll(db, sql: """
                SELECT week FROM weekly_chart WHERE user_id = ? AND kind = 1 AND rank = 1 AND week > ? ORDER BY week LIMIT ?
                """, arguments: [id, week ?? .min, CountedAgain.weeksPerSlice])
            for start in weeks {
                let scrobbles = try WeeklyRollup.storedScrobbles(of: id, from: start, to: WeeklyRollup.end(of: start), in: db)
                try WeeklyRollup.replace(week: start, of: id, with: WeeklyRollup.rows(week: start, scrobbles: scrobbles, folding: folding), in: db)
            }
            return CountedAgain(lastWeek: weeks.last, version: version)
        }
    }
}
