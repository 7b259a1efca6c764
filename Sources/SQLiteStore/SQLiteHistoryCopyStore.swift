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

    /// The copies' claim columns given up to the one job queue: each copy
    /// queued or running becomes a queued job; the row keeps only what the
    /// copy did. Registered after the job queue.
    static func registerJobQueueMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("history copies in the job queue") { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT name, queued_at FROM history_copy WHERE state IN ('queued', 'copying') ORDER BY queued_at, name_key
                """) {
                guard let user = Username(validating: row["name"]) else { continue }
                let queued: Double = row["queued_at"]
                _ = try SQLiteJobQueue.enqueue(.historyCopy, for: user, key: user.key, payload: "", machine: nil,
                                               notBefore: Date(timeIntervalSince1970: queued), at: Date(timeIntervalSince1970: queued), in: db)
            }
            try db.execute(sql: """
                UPDATE history_copy SET state = 'queued' WHERE state = 'copying';
                ALTER TABLE history_copy DROP COLUMN holder;
                ALTER TABLE history_copy DROP COLUMN lease_until;
                """)
        }
    }

    static let columns = "name, state, reason, pages_done, pages_total, scrobbles, queued_at, updated_at, scrobbles_total, done_at"

    static func copy(_ row: Row) -> HistoryCopy? {
        guard let user = Username(validating: row["name"]), let state = HistoryCopy.State(rawValue: row["state"]) else { return nil }
        return HistoryCopy(user: user, state: state, reason: row["reason"], pagesDone: row["pages_done"], pagesTotal: row["pages_total"],
                           scrobbles: row["scrobbles"], scrobblesTotal: row["scrobbles_total"], queuedAt: Date(timeIntervalSince1970: row["queued_at"]),
                           updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
                           doneAt: (row["done_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    static func row(of key: String, in db: Database) throws -> HistoryCopy? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM history_copy WHERE name_key = ?"), arguments: [key]).flatMap(copy)
    }

    /// Queues `user` inside a write (see `HistoryCopyStore.queue`), with
    /// its job when the row is queued. A copy stopped or failed midway
    /// keeps its counts: it resumes from the archive's sync state, so its
    /// progress goes on from where it stood.
    @discardableResult
    static func queue(_ user: Username, at now: Date, evenIfStopped: Bool = false, in db: Database) throws -> HistoryCopy? {
        try db.execute(sql: """
            INSERT INTO history_copy(name_key, name, state, queued_at, updated_at) VALUES (?, ?, 'queued', ?, ?)
            ON CONFLICT(name_key) DO UPDATE SET \(HistoryCopy.requeued)
            WHERE history_copy.state IN ('done', 'failed') OR (history_copy.state = 'stopped' AND ?)
            """, arguments: [user.key, user.value, now.timeIntervalSince1970, now.timeIntervalSince1970, evenIfStopped])
        let copy = try row(of: user.key, in: db)
        if copy?.isUnfinished == true {
            _ = try SQLiteJobQueue.enqueue(.historyCopy, for: user, key: user.key, payload: "", machine: nil, notBefore: nil, at: now, in: db)
        }
        return copy
    }

    /// Whether `claim`'s job is still claimed by its holder and running.
    static func holds(_ claim: CopyClaim, in db: Database) throws -> Bool {
        try SQLiteJobQueue.holds(claim.job, in: db)
    }

    /// Marks the row of a claimed job copying.
    static func begin(_ job: JobClaim, at now: Date, in db: Database) throws -> CopyClaim? {
        try db.execute(sql: """
            UPDATE history_copy SET state = 'copying', reason = NULL, updated_at = ? WHERE name_key = ? AND state IN ('queued', 'copying')
            """, arguments: [now.timeIntervalSince1970, job.job.key])
        guard db.changesCount == 1, let copy = try row(of: job.job.key, in: db) else { return nil }
        return CopyClaim(user: copy.user, job: job, copy: copy)
    }

    public func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy {
        try await writer.write { db in
            guard let copy = try Self.queue(user, at: now, evenIfStopped: evenIfStopped, in: db) else {
                throw SourceError.storage(detail: "the copy of \(user.value) could not be queued")
            }
            return copy
        }
    }

    public func begin(_ job: JobClaim, at now: Date) async throws -> CopyClaim? {
        try await writer.write { db in
            guard try SQLiteJobQueue.holds(job, in: db) else { return nil }
            return try Self.begin(job, at: now, in: db)
        }
    }

    public func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        try await writer.write { db in
            try Self.queue(user, at: now, in: db)
            guard let job = try SQLiteJobQueue.claim(.historyCopy, key: user.key, as: holder, at: now, lease: lease, takingOverFrom: isGone,
                                                     in: db) else { return nil }
            return try Self.begin(job, at: now, in: db)
        }
    }

    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: "UPDATE job SET lease_until = ?, updated_at = ? WHERE id = ? AND holder = ? AND state = 'running'",
                           arguments: [time + lease, time, claim.job.job.id, claim.holder])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: """
                UPDATE history_copy SET pages_done = ?, pages_total = ?, scrobbles = ?,
                    scrobbles_total = CASE WHEN ? > 0 THEN ? ELSE scrobbles_total END, updated_at = ?
                WHERE name_key = ? AND state = 'copying'
                """, arguments: [pagesDone, pagesTotal, scrobbles, scrobblesTotal, scrobblesTotal, time, claim.user.key])
            return db.changesCount == 1
        }
    }

    public func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool {
        try await writer.write { db in
            guard try Self.holds(claim, in: db) else { return false }
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                UPDATE history_copy SET state = ?, reason = ?, updated_at = ?, done_at = CASE WHEN ? IS NULL THEN ? ELSE done_at END
                WHERE name_key = ? AND state = 'copying'
                """, arguments: [reason == nil ? "done" : "failed", reason, time, reason, time, claim.user.key])
            let ending: JobEnding = reason.map { .failed(reason: $0) } ?? .done
            try SQLiteJobQueue.end(claim.job, as: ending, at: now, in: db)
            return true
        }
    }

    public func release(_ claim: CopyClaim, at now: Date) async throws -> Bool {
        try await writer.write { db in
            guard try Self.holds(claim, in: db) else { return false }
            try db.execute(sql: "UPDATE history_copy SET state = 'queued', updated_at = ? WHERE name_key = ? AND state = 'copying'",
                           arguments: [now.timeIntervalSince1970, claim.user.key])
            try SQLiteJobQueue.end(claim.job, as: .stopped, at: now, in: db)
            return true
        }
    }

    public func stop(_ user: Username, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM job WHERE kind = ? AND key = ?", arguments: [JobKind.historyCopy.rawValue, user.key])
            try db.execute(sql: """
                UPDATE history_copy SET state = 'stopped', reason = NULL, updated_at = ?
                WHERE name_key = ? AND state IN ('queued', 'copying')
                """, arguments: [now.timeIntervalSince1970, user.key])
            return db.changesCount == 1
        }
    }

    public func clear(_ user: Username, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM job WHERE kind = ? AND key = ?", arguments: [JobKind.historyCopy.rawValue, user.key])
            try db.execute(sql: """
                UPDATE history_copy SET state = 'stopped', reason = NULL, pages_done = 0, pages_total = 0,
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
        try await writer.read { db in try Self.row(of: user.key, in: db) }
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
            let due = try String.fetchAll(db, sql: """
                SELECT name FROM history_copy WHERE state = 'done' AND done_at < ? AND name_key IN (SELECT key FROM list_entry WHERE isMe)
                """, arguments: [doneBefore.timeIntervalSince1970])
            var queued = 0
            for name in due {
                guard let user = Username(validating: name) else { continue }
                if try Self.queue(user, at: now, in: db)?.state == .queued { queued += 1 }
            }
            return queued
        }
    }
}
