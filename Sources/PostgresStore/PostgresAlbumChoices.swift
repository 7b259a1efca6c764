import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

extension PostgresScrobbleStore {
    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
        let logger = self.logger
        return try await mapped {
            let rows = try await database.client.query("SELECT folds_editions FROM album_folding WHERE name_key = \(user.key)", logger: logger)
            for try await folds in rows.decode(Bool.self) { return AlbumFolding(foldsEditions: folds) }
            return .editions
        }
    }

    public func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date) async throws(SourceError) -> Bool {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The person's lock first, as every write of their archive takes it.
                let id = try await Self.userID(of: user, connection, logger)
                if id != nil { _ = try await Self.lockedUserID(of: user, connection, logger) }
                var current = AlbumFolding.editions
                for try await folds in try await connection.query("""
                    SELECT folds_editions FROM album_folding WHERE name_key = \(user.key) FOR UPDATE
                    """, logger: logger).decode(Bool.self) {
                    current = AlbumFolding(foldsEditions: folds)
                }
                guard current != folding else { return false }
                try await connection.query("""
                    INSERT INTO album_folding (name_key, folds_editions, version) VALUES (\(user.key), \(folding.foldsEditions), 1)
                    ON CONFLICT (name_key) DO UPDATE SET folds_editions = excluded.folds_editions, version = album_folding.version + 1
                    """, logger: logger)
                if id != nil {
                    _ = try await PostgresJobQueue.enqueue(.albumFolding, for: user, key: user.key, payload: "", machine: nil, notBefore: nil,
                                                           at: now, connection, logger)
                }
                return true
            }
        }
    }

    public func countAgain(_ user: Username, after week: Int64?, fence: JobFence?) async throws(SourceError) -> CountedAgain {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The job's row before the person's lock, as `writing` takes them.
                try await Self.hold(fence, connection, logger)
                var version: Int64 = 0
                for try await kept in try await connection.query("""
                    SELECT version FROM album_folding WHERE name_key = \(user.key)
                    """, logger: logger).decode(Int64.self) {
                    version = kept
                }
                guard try await Self.userID(of: user, connection, logger) != nil else { return CountedAgain(lastWeek: nil, version: version) }
                let id = try await Self.lockedUserID(of: user, connection, logger)
                let folding = try await Self.foldings(of: [id], connection, logger)[id] ?? .editions
                var weeks: [Int64] = []
                // Every week with a play has artist rows (kind 1).
                for try await start in try await connection.query("""
                    SELECT week FROM weekly_chart WHERE user_id = \(id) AND kind = 1 AND rank = 1 AND week > \(week ?? .min)
                    ORDER BY week LIMIT \(CountedAgain.weeksPerSlice)
                    """, logger: logger).decode(Int64.self) {
                    weeks.append(start)
                }
                guard !weeks.isEmpty else { return CountedAgain(lastWeek: nil, version: version) }
                let scrobbles = try await Self.storedScrobbles(of: id, weeks: weeks, connection, logger)
                try await connection.query("DELETE FROM weekly_chart WHERE user_id = \(id) AND week = ANY(\(weeks)::bigint[])", logger: logger)
                let rows = weeks.flatMap { WeeklyRollup.rows(week: $0, scrobbles: scrobbles[$0] ?? [], folding: folding) }
                try await Self.copyCharts(rows, userID: id, connection, logger)
                return CountedAgain(lastWeek: weeks.last, version: version)
            }
        }
    }
}
