import Foundation
import GRDB
import Stores
import VinylogueCore

/// `HistoryCopyStore` in SQLite (table `history_copy`, one row per person,
/// keyed by the case-folded name). Every change is one write transaction:
/// SQLite's one writer makes a claim atomic.
public struct SQLiteHistoryCopyStore: HistoryCopyStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("history copies") { db in
            try db.execute(sql: """
                CREATE TABLE history_copy (
                    name_key TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    state TEXT NOT NULL,
                    reason TEXT,
                    pages_done INTEGER NOT NULL DEFAULT 0,
                    pages_total INTEGER NOT NULL DEFAULT 0,
                    scrobbles INTEGER NOT NULL DEFAULT 0,
                    queued_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    lease_until REAL,
                    holder TEXT);
                CREATE INDEX history_copy_waiting ON history_copy(state, queued_at);
                """)
        }
    }

    /// The total a copy expects and when one last finished (for the
    /// progress people see, and for charting from the archive only once a
    /// whole history is in). Registered after every earlier migration.
    static func registerTotalsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("history copy totals") { db in
            try db.execute(sql: """
                ALTER TABLE history_copy ADD COLUMN scrobbles_total INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE history_copy ADD COLUMN done_at REAL;
                UPDATE history_copy SET done_at = updated_at WHERE state = 'done';
                """)
        }
    }

    static let columns = "name, state, reason, pages_done, pages_total, scrobbles, queued_at, updated_at, lease_until, scrobbles_total, done_at"

    static func copy(_ row: Row) -> HistoryCopy? {
        guard let user = Username(validating: row["name"]), let state = HistoryCopy.State(rawValue: row["state"]) else { return nil }
        return HistoryCopy(user: user, state: state, reason: row["reason"], pagesDone: row["pages_done"], pagesTotal: row["pages_total"],
                           scrobbles: row["scrobbles"], scrobblesTotal: row["scrobbles_total"], queuedAt: Date(timeIntervalSince1970: row["queued_at"]),
                           updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
                           leaseUntil: (row["lease_until"] as Double?).map(Date.init(timeIntervalSince1970:)),
                           doneAt: (row["done_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    /// Queues `user` inside a write (see `HistoryCopyStore.queue`). A copy
    /// stopped or failed midway keeps its counts: it resumes from the
    /// archive's sync state, so its progress goes on from where it stood.
    static func queue(_ user: Username, at now: Date, evenIfStopped: Bool = false, in db: Database) throws {
        try db.execute(sql: """
            INSERT INTO history_copy(name_key, name, state, queued_at, updated_at) VALUES (?, ?, 'queued', ?, ?)
            ON CONFLICT(name_key) DO UPDATE SET \(HistoryCopy.requeued)
            WHERE history_copy.state IN ('done', 'failed') OR (history_copy.state = 'stopped' AND ?)
            """, arguments: [user.key, user.value, now.timeIntervalSince1970, now.timeIntervalSince1970, evenIfStopped])
    }

    /// Claims the row of `key` for `holder` when it waits (queued, or its
    /// lease ran out), or when `gone` names the worker holding it.
    static func take(_ key: String, as holder: String = CopyClaim.newHolder(), at now: Date, lease: TimeInterval,
                     from gone: String? = nil, in db: Database) throws -> CopyClaim? {
        let time = now.timeIntervalSince1970
        try db.execute(sql: """
            UPDATE history_copy SET state = 'copying', holder = ?, lease_until = ?, updated_at = ?, reason = NULL
            WHERE name_key = ? AND (state = 'queued' OR (state = 'copying' AND (lease_until <= ? OR holder = ?)))
            """, arguments: [holder, time + lease, time, key, time, gone])
        guard db.changesCount == 1,
              let row = try Row.fetchOne(db, sql: "SELECT \(columns) FROM history_copy WHERE name_key = ?", arguments: [key]),
              let copy = copy(row) else { return nil }
        return CopyClaim(user: copy.user, holder: holder, copy: copy)
    }

    public func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy {
        try await writer.write { db in
            try Self.queue(user, at: now, evenIfStopped: evenIfStopped, in: db)
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM history_copy WHERE name_key = ?", arguments: [user.key]),
                  let copy = Self.copy(row) else { throw SourceError.storage(detail: "the copy of \(user.value) could not be queued") }
            return copy
        }
    }

    public func claimNext(as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            let waiting = try Row.fetchAll(db, sql: """
                SELECT name_key, state, lease_until, holder FROM history_copy WHERE state IN ('queued', 'copying')
                ORDER BY queued_at, name_key
                """)
            for row in waiting {
                let holding: String? = row["holder"]
                let gone = row["state"] == "copying" ? holding.flatMap { isGone($0) ? $0 : nil } : nil
                guard row["state"] == "queued" || (row["lease_until"] as Double? ?? 0) <= time || gone != nil else { continue }
                return try Self.take(row["name_key"], as: holder, at: now, lease: lease, from: gone, in: db)
            }
            return nil
        }
    }

    public func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        try await writer.write { db in
            try Self.queue(user, at: now, in: db)
            let current = try String.fetchOne(db, sql: "SELECT holder FROM history_copy WHERE name_key = ? AND state = 'copying'",
                                              arguments: [user.key])
            return try Self.take(user.key, as: holder, at: now, lease: lease, from: current.flatMap { isGone($0) ? $0 : nil }, in: db)
        }
    }

    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                UPDATE history_copy SET pages_done = ?, pages_total = ?, scrobbles = ?,
                    scrobbles_total = CASE WHEN ? > 0 THEN ? ELSE scrobbles_total END, lease_until = ?, updated_at = ?
                WHERE name_key = ? AND holder = ? AND state = 'copying'
                """, arguments: [pagesDone, pagesTotal, scrobbles, scrobblesTotal, scrobblesTotal, time + lease, time,
                                   claim.user.key, claim.holder])
            return db.changesCount == 1
        }
    }

    public func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE history_copy SET state = ?, reason = ?, lease_until = NULL, holder = NULL, updated_at = ?,
                    done_at = CASE WHEN ? IS NULL THEN ? ELSE done_at END
                WHERE name_key = ? AND holder = ? AND state = 'copying'
                """, arguments: [reason == nil ? "done" : "failed", reason, now.timeIntervalSince1970, reason, now.timeIntervalSince1970,
                                   claim.user.key, claim.holder])
            return db.changesCount == 1
        }
    }

    public func release(_ claim: CopyClaim, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE history_copy SET state = 'queued', lease_until = NULL, holder = NULL, updated_at = ?
                WHERE name_key = ? AND holder = ? AND state = 'copying'
                """, arguments: [now.timeIntervalSince1970, claim.user.key, claim.holder])
            return db.changesCount == 1
        }
    }

    public func stop(_ user: Username, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE history_copy SET state = 'stopped', reason = NULL, lease_until = NULL, holder = NULL, updated_at = ?
                WHERE name_key = ? AND state IN ('queued', 'copying')
                """, arguments: [now.timeIntervalSince1970, user.key])
            return db.changesCount == 1
        }
    }

    public func clear(_ user: Username, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE history_copy SET state = 'stopped', reason = NULL, lease_until = NULL, holder = NULL, pages_done = 0, pages_total = 0,
                    scrobbles = 0, scrobbles_total = 0, done_at = NULL, updated_at = ?
                WHERE name_key = ?
                """, arguments: [now.timeIntervalSince1970, user.key])
        }
    }

    public func unfinished() async throws -> [HistoryCopy] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM history_copy WHERE state IN ('queued', 'copying') ORDER BY queued_at, name_key
                """).compactMap(Self.copy)
        }
    }

    public func copy(of user: Username) async throws -> HistoryCopy? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM history_copy WHERE name_key = ?", arguments: [user.key]).flatMap(Self.copy)
        }
    }

    public func counts() async throws -> [HistoryCopy.State: Int] {
        try await writer.read { db in
            var counts: [HistoryCopy.State: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM history_copy GROUP BY state") {
                if let state = HistoryCopy.State(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    public func refreshOwnHistories(doneBefore: Date, at now: Date) async throws -> Int {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                UPDATE history_copy SET state = 'queued', reason = NULL, pages_done = 0, pages_total = 0, scrobbles = 0,
                    scrobbles_total = 0, queued_at = ?, updated_at = ?, lease_until = NULL, holder = NULL
                WHERE state = 'done' AND done_at < ? AND name_key IN (SELECT key FROM list_entry WHERE isMe)
                """, arguments: [time, time, doneBefore.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
