import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
        try await unsafeReadAsync { db in try Self.folding(nameKey: user.key, in: db) }
    }

    public func albumChoices(of user: Username) async throws(SourceError) -> [AlbumChoice] {
        try await unsafeReadAsync { db in try Self.albumChoices(nameKey: user.key, in: db) }
    }

    public func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
        try await writeAsync { db in
            try Self.hold(fence, in: db)
            let current = try Bool.fetchOne(db, sql: "SELECT folds_editions FROM album_folding WHERE name_key = ?", arguments: [user.key]) ?? true
            guard current != folding.foldsEditions else { return false }
            try db.execute(sql: """
                INSERT INTO album_folding (name_key, folds_editions, version) VALUES (?, ?, 1)
                ON CONFLICT(name_key) DO UPDATE SET folds_editions = excluded.folds_editions, version = album_folding.version + 1
                """, arguments: [user.key, folding.foldsEditions])
            if let id = try Self.userID(of: user, in: db) {
                try Self.queueRecount(userID: id, of: user.key, albums: nil, at: now, in: db)
            }
            return true
        }
    }

    public func changeAlbums(_ change: AlbumChoiceChange, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
        try await writeAsync { db in
            try Self.hold(fence, in: db)
            let choices = try Self.albumChoices(nameKey: user.key, in: db)
            let groups = try Self.userID(of: user, in: db).map { try Self.releaseGroups(userID: $0, in: db) } ?? [:]
            guard let changed = change.applied(to: choices, sameRelease: groups, at: now) else { return false }
            try Self.replaceAlbumChoices(changed.choices, nameKey: user.key, in: db)
            if let id = try Self.userID(of: user, in: db) {
                try Self.queueRecount(userID: id, of: user.key, albums: changed.touched, at: now, in: db)
            }
            return true
        }
    }

    public func countAgain(_ user: Username, under claim: JobClaim?, at now: Date) async throws(SourceError) -> Bool {
        try await writeAsync { db in
            if let claim { try Self.hold(claim.fence, in: db) }
            let id = try Self.userID(of: user, in: db)
            let weeks = try id.map { id in
                try Int64.fetchAll(db, sql: "SELECT week FROM chart_recount WHERE user_id = ? ORDER BY week LIMIT ?",
                                   arguments: [id, ChartRecount.weeksPerSlice])
            } ?? []
            guard let id, !weeks.isEmpty else {
                if let claim { try SQLiteJobQueue.end(claim, as: .done, at: now, in: db) }
                return false
            }
            var names = ScrobbleTally.FoldedNames(try WeeklyRollup.folding(userID: id, in: db))
            for start in weeks {
                let scrobbles = try WeeklyRollup.storedScrobbles(of: id, from: start, to: WeeklyRollup.end(of: start), in: db)
                try WeeklyRollup.replace(week: start, of: id, with: WeeklyRollup.rows(week: start, scrobbles: scrobbles, names: &names), in: db)
            }
            try db.execute(sql: "DELETE FROM chart_recount WHERE user_id = ? AND week >= ? AND week <= ?",
                           arguments: [id, weeks.first!, weeks.last!])
            return true
        }
    }

    /// The grouping of the person whose name key is `nameKey`.
    static func folding(nameKey: String, in db: Database) throws -> AlbumFolding {
        let folds = try Bool.fetchOne(db.cachedStatement(sql: "SELECT folds_editions FROM album_folding WHERE name_key = ?"),
                                      arguments: [nameKey]) ?? true
        var groups: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT g.key, g.grouped_as FROM album_release_group g JOIN archive_user u ON u.id = g.user_id WHERE u.name_key = ?
            """), arguments: [nameKey]) {
            groups[row[0]] = row[1]
        }
        return AlbumFolding(foldsEditions: folds, choices: try albumChoices(nameKey: nameKey, in: db), sameRelease: groups)
    }

    static func albumChoices(nameKey: String, in db: Database) throws -> [AlbumChoice] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT kind, key, target, artist, album, target_artist, target_album, made_at FROM album_choice
            WHERE name_key = ? ORDER BY made_at, kind, key
            """), arguments: [nameKey]).compactMap(albumChoice)
    }

    static func albumChoice(_ row: Row) -> AlbumChoice? {
        guard let kind = AlbumChoice.Kind(rawValue: row["kind"]) else { return nil }
        return AlbumChoice(kind: kind, key: row["key"], target: row["target"], artist: row["artist"], album: row["album"],
                           targetArtist: row["target_artist"], targetAlbum: row["target_album"],
                           madeAt: Date(timeIntervalSince1970: row["made_at"]))
    }

    /// The person's choices become `choices`.
    static func replaceAlbumChoices(_ choices: [AlbumChoice], nameKey: String, in db: Database) throws {
        try db.execute(sql: "DELETE FROM album_choice WHERE name_key = ?", arguments: [nameKey])
        for c in choices {
            try db.execute(sql: """
                INSERT INTO album_choice (name_key, kind, key, target, artist, album, target_artist, target_album, made_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [nameKey, c.kind.rawValue, c.key, c.target, c.artist, c.album, c.targetArtist, c.targetAlbum,
                                 c.madeAt.timeIntervalSince1970])
        }
    }

    /// Puts the weeks of `albums` (album keys as the kept charts hold
    /// them; every week when nil) on `userID`'s list of weeks to count
    /// again, and queues the job that counts them.
    static func queueRecount(userID: Int64, of nameKey: String, albums: Set<String>?, at now: Date, in db: Database) throws {
        if let albums {
            guard !albums.isEmpty else { return }
            // In parts: a statement takes at most 32,766 arguments.
            let sorted = albums.sorted()
            for start in stride(from: 0, to: sorted.count, by: 500) {
                let part = sorted[start..<min(start + 500, sorted.count)]
                try db.execute(sql: """
                    INSERT OR IGNORE INTO chart_recount (user_id, week)
                    SELECT DISTINCT user_id, week FROM weekly_chart INDEXED BY weekly_chart_album
                    WHERE user_id = ? AND album_key IS NOT NULL AND album_key IN (\(databaseQuestionMarks(count: part.count)))
                    """, arguments: StatementArguments([userID]) + StatementArguments(Array(part)))
            }
        } else {
            // Every week with a play has an artist at rank 1 (kind 1).
            try db.execute(sql: """
                INSERT OR IGNORE INTO chart_recount (user_id, week)
                SELECT user_id, week FROM weekly_chart WHERE user_id = ? AND kind = 1 AND rank = 1
                """, arguments: [userID])
        }
        _ = try SQLiteJobQueue.enqueue(.albumFolding, personKey: nameKey, key: nameKey, payload: "", machine: nil, notBefore: nil,
                                       at: now, in: db)
    }

    /// The person's single-album choices, and their list of weeks to count
    /// again; a job of the old kind (which counted every week) gets every
    /// week of its person on the list.
    static func registerAlbumChoiceMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("album choices of single albums") { db in
            try db.execute(sql: """
                CREATE TABLE album_choice (
                    name_key TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    key TEXT NOT NULL,
                    target TEXT,
                    artist TEXT NOT NULL,
                    album TEXT NOT NULL,
                    target_artist TEXT,
                    target_album TEXT,
                    made_at REAL NOT NULL,
                    PRIMARY KEY (name_key, kind, key)
                ) WITHOUT ROWID;
                CREATE TABLE chart_recount (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    week INTEGER NOT NULL,
                    PRIMARY KEY (user_id, week)
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO chart_recount (user_id, week)
                SELECT c.user_id, c.week FROM weekly_chart c JOIN archive_user u ON u.id = c.user_id
                WHERE c.kind = 1 AND c.rank = 1 AND u.name_key IN (
                    SELECT key FROM job WHERE kind = '\(JobKind.albumFolding.rawValue)' AND state IN ('queued', 'running'));
                """)
        }
    }
}
