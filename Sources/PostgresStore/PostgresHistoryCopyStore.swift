import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `HistoryCopyStore` in PostgreSQL (table `history_copy`), shared by every
/// instance of a fleet; each copy's claim is its job's in the one queue
/// (`PostgresJobQueue`), changed in the same transaction as the row.
public struct PostgresHistoryCopyStore: HistoryCopyStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    static let tables = [
        """
        CREATE TABLE history_copy (
            name_key TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            state TEXT NOT NULL,
            reason TEXT,
            pages_done INT NOT NULL DEFAULT 0,
            pages_total INT NOT NULL DEFAULT 0,
            scrobbles BIGINT NOT NULL DEFAULT 0,
            queued_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            lease_until DOUBLE PRECISION,
            holder TEXT)
        """,
        "CREATE INDEX history_copy_waiting ON history_copy(state, queued_at)",
    ]

    /// The total a copy expects and when one last finished.
    static let totals = [
        "ALTER TABLE history_copy ADD COLUMN scrobbles_total BIGINT NOT NULL DEFAULT 0, ADD COLUMN done_at DOUBLE PRECISION",
        "UPDATE history_copy SET done_at = updated_at WHERE state = 'done'",
    ]

    /// The copies' claim columns given up to the one job queue (see
    /// `SQLiteHistoryCopyStore.registerJobQueueMigration`).
    static let movedToJobQueue: PostgresDatabase.Migration.Work = { connection, logger, _ in
        var waiting: [(String, Double)] = []
        let rows = try await connection.query("""
            SELECT name, queued_at FROM history_copy WHERE state IN ('queued', 'copying') ORDER BY queued_at, name_key
            """, logger: logger)
        for try await row in rows.decode((String, Double).self) { waiting.append(row) }
        for (name, queued) in waiting {
            guard let user = Username(validating: name) else { continue }
            let at = Date(timeIntervalSince1970: queued)
            _ = try await PostgresJobQueue.enqueue(.historyCopy, for: user, key: user.key, payload: "", machine: nil, notBefore: at, at: at,
                                                   connection, logger)
        }
        try await connection.query("UPDATE history_copy SET state = 'queued' WHERE state = 'copying'", logger: logger)
        try await connection.query("ALTER TABLE history_copy DROP COLUMN holder, DROP COLUMN lease_until", logger: logger)
    }

    typealias Columns = (String, String, String?, Int32, Int32, Int64, Double, Double, Int64, Double?)
    static let columns = "name, state, reason, pages_done, pages_total, scrobbles, queued_at, updated_at, scrobbles_total, done_at"

    static func copy(_ c: Columns) -> HistoryCopy? {
        guard let user = Username(validating: c.0), let state = HistoryCopy.State(rawValue: c.1) else { return nil }
        return HistoryCopy(user: user, state: state, reason: c.2, pagesDone: Int(c.3), pagesTotal: Int(c.4), scrobbles: Int(c.5),
                           scrobblesTotal: Int(c.8), queuedAt: Date(timeIntervalSince1970: c.6), updatedAt: Date(timeIntervalSince1970: c.7),
                           doneAt: c.9.map(Date.init(timeIntervalSince1970:)))
    }

    static func first(_ rows: PostgresRowSequence) async throws -> HistoryCopy? {
        for try await row in rows.decode(Columns.self) { return copy(row) }
        return nil
    }

    static func row(of key: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> HistoryCopy? {
        try await first(try await connection.query("SELECT \(unescaped: columns) FROM history_copy WHERE name_key = \(key)", logger: logger))
    }

    /// Queues `user` on `connection`, in the caller's transaction, with its
    /// job when the row is queued (see `HistoryCopyStore.queue`).
    @discardableResult
    static func queue(_ user: Username, at now: Date, evenIfStopped: Bool = false, _ connection: PostgresConnection,
                      _ logger: Logger) async throws -> HistoryCopy? {
        let time = now.timeIntervalSince1970
        // The job's row before the copy's, the order every other change
        // of a copy takes them in (no deadlock with a copy ending).
        try await connection.query("""
            SELECT 1 FROM job WHERE kind = \(JobKind.historyCopy.rawValue) AND key = \(user.key) AND state IN ('queued', 'running') FOR UPDATE
            """, logger: logger)
        try await connection.query("""
            INSERT INTO history_copy(name_key, name, state, queued_at, updated_at) VALUES (\(user.key), \(user.value), 'queued', \(time), \(time))
            ON CONFLICT (name_key) DO UPDATE SET \(unescaped: HistoryCopy.requeued)
            WHERE history_copy.state IN ('done', 'failed') OR (history_copy.state = 'stopped' AND \(evenIfStopped))
            """, logger: logger)
        let copy = try await row(of: user.key, connection, logger)
        if copy?.isUnfinished == true {
            _ = try await PostgresJobQueue.enqueue(.historyCopy, for: user, key: user.key, payload: "", machine: nil, notBefore: nil, at: now,
                                                   connection, logger)
        }
        return copy
    }

    /// Marks the row of a claimed job copying.
    static func begin(_ job: JobClaim, at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws -> CopyClaim? {
        let updated = try await first(try await connection.query("""
            UPDATE history_copy SET state = 'copying', reason = NULL, updated_at = \(now.timeIntervalSince1970)
            WHERE name_key = \(job.job.key) AND state IN ('queued', 'copying') RETURNING \(unescaped: columns)
            """, logger: logger))
        return updated.map { CopyClaim(user: $0.user, job: job, copy: $0) }
    }

    public func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            guard let copy = try await Self.queue(user, at: now, evenIfStopped: evenIfStopped, connection, logger) else {
                throw SourceError.storage(detail: "the copy of \(user.value) could not be queued")
            }
            return copy
        }
    }

    public func begin(_ job: JobClaim, at now: Date) async throws -> CopyClaim? {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await PostgresJobQueue.holds(job, connection, logger) else { return nil }
            return try await Self.begin(job, at: now, connection, logger)
        }
    }

    public func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.queue(user, at: now, connection, logger)
            guard let job = try await PostgresJobQueue.claim(.historyCopy, key: user.key, as: holder, at: now, lease: lease,
                                                             takingOverFrom: isGone, connection, logger) else { return nil }
            return try await Self.begin(job, at: now, connection, logger)
        }
    }

    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        let logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await Self.changed(try await connection.query("""
                UPDATE job SET lease_until = \(time + lease), updated_at = \(time)
                WHERE id = \(claim.job.job.id) AND holder = \(claim.holder) AND state = 'running' RETURNING 1
                """, logger: logger)) else { return false }
            return try await Self.changed(try await connection.query("""
                UPDATE history_copy SET pages_done = \(Int32(clamping: pagesDone)), pages_total = \(Int32(clamping: pagesTotal)),
                    scrobbles = \(Int64(scrobbles)),
                    scrobbles_total = CASE WHEN \(Int64(scrobblesTotal)) > 0 THEN \(Int64(scrobblesTotal)) ELSE scrobbles_total END,
                    updated_at = \(time)
                WHERE name_key = \(claim.user.key) AND state = 'copying' RETURNING 1
                """, logger: logger))
        }
    }

    public func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool {
        let logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await PostgresJobQueue.holds(claim.job, connection, logger) else { return false }
            try await connection.query("""
                UPDATE history_copy SET state = \(reason == nil ? "done" : "failed"), reason = \(reason.map(CopyText.withoutNUL)),
                    updated_at = \(time), done_at = CASE WHEN \(reason == nil) THEN \(time) ELSE done_at END
                WHERE name_key = \(claim.user.key) AND state = 'copying'
                """, logger: logger)
            let ending: JobEnding = reason.map { .failed(reason: $0) } ?? .done
            return try await PostgresJobQueue.end(claim.job, as: ending, at: now, connection, logger)
        }
    }

    public func release(_ claim: CopyClaim, at now: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await PostgresJobQueue.holds(claim.job, connection, logger) else { return false }
            try await connection.query("""
                UPDATE history_copy SET state = 'queued', updated_at = \(now.timeIntervalSince1970)
                WHERE name_key = \(claim.user.key) AND state = 'copying'
                """, logger: logger)
            return try await PostgresJobQueue.end(claim.job, as: .stopped, at: now, connection, logger)
        }
    }

    public func stop(_ user: Username, at now: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await connection.query("DELETE FROM job WHERE kind = \(JobKind.historyCopy.rawValue) AND key = \(user.key)", logger: logger)
            return try await Self.changed(try await connection.query("""
                UPDATE history_copy SET state = 'stopped', reason = NULL, updated_at = \(now.timeIntervalSince1970)
                WHERE name_key = \(user.key) AND state IN ('queued', 'copying') RETURNING 1
                """, logger: logger))
        }
    }

    public func clear(_ user: Username, at now: Date) async throws {
        let logger = database.logger
        try await database.client.withTransaction(logger: logger) { connection in
            try await connection.query("DELETE FROM job WHERE kind = \(JobKind.historyCopy.rawValue) AND key = \(user.key)", logger: logger)
            try await connection.query("""
                UPDATE history_copy SET state = 'stopped', reason = NULL, pages_done = 0, pages_total = 0,
                    scrobbles = 0, scrobbles_total = 0, done_at = NULL, updated_at = \(now.timeIntervalSince1970)
                WHERE name_key = \(user.key)
                """, logger: logger)
        }
    }

    /// Whether an `UPDATE … RETURNING 1` changed a row.
    static func changed(_ rows: PostgresRowSequence) async throws -> Bool {
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    public func unfinished() async throws -> [HistoryCopy] {
        let rows = try await database.client.query("""
            SELECT \(unescaped: Self.columns) FROM history_copy WHERE state IN ('queued', 'copying') ORDER BY queued_at, name_key
            """, logger: database.logger)
        var copies: [HistoryCopy] = []
        for try await row in rows.decode(Columns.self) { if let copy = Self.copy(row) { copies.append(copy) } }
        return copies
    }

    public func copy(of user: Username) async throws -> HistoryCopy? {
        try await Self.first(try await database.client.query(
            "SELECT \(unescaped: Self.columns) FROM history_copy WHERE name_key = \(user.key)", logger: database.logger))
    }

    public func counts() async throws -> [HistoryCopy.State: Int] {
        var counts: [HistoryCopy.State: Int] = [:]
        let rows = try await database.client.query("SELECT state, count(*) FROM history_copy GROUP BY state", logger: database.logger)
        for try await (state, n) in rows.decode((String, Int64).self) {
            if let state = HistoryCopy.State(rawValue: state) { counts[state] = Int(n) }
        }
        return counts
    }

    public func refreshOwnHistories(doneBefore: Date, at now: Date) async throws -> Int {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            var due: [String] = []
            let rows = try await connection.query("""
                SELECT name FROM history_copy
                WHERE state = 'done' AND done_at < \(doneBefore.timeIntervalSince1970) AND name_key IN (SELECT key FROM list_entry WHERE is_me)
                """, logger: logger)
            for try await name in rows.decode(String.self) { due.append(name) }
            var queued = 0
            for name in due {
                guard let user = Username(validating: name) else { continue }
                if try await Self.queue(user, at: now, connection, logger)?.state == .queued { queued += 1 }
            }
            return queued
        }
    }
}
