import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `HistoryCopyStore` in PostgreSQL (table `history_copy`), shared by every
/// instance of a fleet: a claim is an `UPDATE` whose condition is checked
/// again under the row's lock, so two instances never both take one copy,
/// and the next waiting copy is found with `SKIP LOCKED`.
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

    typealias Columns = (String, String, String?, Int32, Int32, Int64, Double, Double, Double?, Int64, Double?)
    static let columns = "name, state, reason, pages_done, pages_total, scrobbles, queued_at, updated_at, lease_until, scrobbles_total, done_at"

    static func copy(_ c: Columns) -> HistoryCopy? {
        guard let user = Username(validating: c.0), let state = HistoryCopy.State(rawValue: c.1) else { return nil }
        return HistoryCopy(user: user, state: state, reason: c.2, pagesDone: Int(c.3), pagesTotal: Int(c.4), scrobbles: Int(c.5),
                           scrobblesTotal: Int(c.9), queuedAt: Date(timeIntervalSince1970: c.6), updatedAt: Date(timeIntervalSince1970: c.7),
                           leaseUntil: c.8.map(Date.init(timeIntervalSince1970:)), doneAt: c.10.map(Date.init(timeIntervalSince1970:)))
    }

    static func first(_ rows: PostgresRowSequence) async throws -> HistoryCopy? {
        for try await row in rows.decode(Columns.self) { return copy(row) }
        return nil
    }

    static func queue(_ user: Username, at now: Date, evenIfStopped: Bool = false, _ connection: PostgresConnection,
                      _ logger: Logger) async throws {
        let time = now.timeIntervalSince1970
        try await connection.query("""
            INSERT INTO history_copy(name_key, name, state, queued_at, updated_at) VALUES (\(user.key), \(user.value), 'queued', \(time), \(time))
            ON CONFLICT (name_key) DO UPDATE SET \(unescaped: HistoryCopy.requeued)
            WHERE history_copy.state IN ('done', 'failed') OR (history_copy.state = 'stopped' AND \(evenIfStopped))
            """, logger: logger)
    }

    public func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.queue(user, at: now, evenIfStopped: evenIfStopped, connection, logger)
            let rows = try await connection.query("SELECT \(unescaped: Self.columns) FROM history_copy WHERE name_key = \(user.key)", logger: logger)
            guard let copy = try await Self.first(rows) else { throw SourceError.storage(detail: "the copy of \(user.value) could not be queued") }
            return copy
        }
    }

    public func claimNext(as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        let logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            // Rows another transaction is claiming are skipped; those left
            // are locked while their holders are judged.
            let rows = try await connection.query("""
                SELECT name_key, state, lease_until, holder FROM history_copy WHERE state IN ('queued', 'copying')
                ORDER BY queued_at, name_key FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var chosen: String?
            for try await (key, state, leaseUntil, holding) in rows.decode((String, String, Double?, String?).self) where chosen == nil {
                let gone = state == "copying" && holding.map(isGone) == true
                if state == "queued" || (leaseUntil ?? 0) <= time || gone { chosen = key }
            }
            guard let chosen else { return nil }
            let claimed = try await connection.query("""
                UPDATE history_copy SET state = 'copying', holder = \(holder), lease_until = \(time + lease), updated_at = \(time), reason = NULL
                WHERE name_key = \(chosen) RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let copy = try await Self.first(claimed) else { return nil }
            return CopyClaim(user: copy.user, holder: holder, copy: copy)
        }
    }

    public func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim? {
        let logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.queue(user, at: now, connection, logger)
            // The row locked while its holder is judged, so the judgement holds.
            var gone: String?
            let current = try await connection.query("""
                SELECT holder FROM history_copy WHERE name_key = \(user.key) AND state = 'copying' FOR UPDATE
                """, logger: logger)
            for try await name in current.decode(String?.self) { gone = name.flatMap { isGone($0) ? $0 : nil } }
            let rows = try await connection.query("""
                UPDATE history_copy SET state = 'copying', holder = \(holder), lease_until = \(time + lease), updated_at = \(time), reason = NULL
                WHERE name_key = \(user.key)
                    AND (state = 'queued' OR (state = 'copying' AND (lease_until <= \(time) OR holder = \(gone))))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let copy = try await Self.first(rows) else { return nil }
            return CopyClaim(user: copy.user, holder: holder, copy: copy)
        }
    }

    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        let time = now.timeIntervalSince1970, total = Int64(scrobblesTotal)
        let rows = try await database.client.query("""
            UPDATE history_copy SET pages_done = \(Int32(clamping: pagesDone)), pages_total = \(Int32(clamping: pagesTotal)),
                scrobbles = \(Int64(scrobbles)), scrobbles_total = CASE WHEN \(total) > 0 THEN \(total) ELSE scrobbles_total END,
                lease_until = \(time + lease), updated_at = \(time)
            WHERE name_key = \(claim.user.key) AND holder = \(claim.holder) AND state = 'copying'
            RETURNING 1
            """, logger: database.logger)
        return try await Self.changed(rows)
    }

    public func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool {
        let time = now.timeIntervalSince1970, done = reason == nil
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = \(done ? "done" : "failed"), reason = \(reason), lease_until = NULL, holder = NULL,
                updated_at = \(time), done_at = CASE WHEN \(done) THEN \(time) ELSE done_at END
            WHERE name_key = \(claim.user.key) AND holder = \(claim.holder) AND state = 'copying'
            RETURNING 1
            """, logger: database.logger)
        return try await Self.changed(rows)
    }

    public func release(_ claim: CopyClaim, at now: Date) async throws -> Bool {
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = 'queued', lease_until = NULL, holder = NULL, updated_at = \(now.timeIntervalSince1970)
            WHERE name_key = \(claim.user.key) AND holder = \(claim.holder) AND state = 'copying'
            RETURNING 1
            """, logger: database.logger)
        return try await Self.changed(rows)
    }

    public func stop(_ user: Username, at now: Date) async throws -> Bool {
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = 'stopped', reason = NULL, lease_until = NULL, holder = NULL, updated_at = \(now.timeIntervalSince1970)
            WHERE name_key = \(user.key) AND state IN ('queued', 'copying')
            RETURNING 1
            """, logger: database.logger)
        return try await Self.changed(rows)
    }

    public func clear(_ user: Username, at now: Date) async throws {
        try await database.client.query("""
            UPDATE history_copy SET state = 'stopped', reason = NULL, lease_until = NULL, holder = NULL, pages_done = 0, pages_total = 0,
                scrobbles = 0, scrobbles_total = 0, done_at = NULL, updated_at = \(now.timeIntervalSince1970)
            WHERE name_key = \(user.key)
            """, logger: database.logger)
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
        let rows = try await database.client.query("SELECT \(unescaped: Self.columns) FROM history_copy WHERE name_key = \(user.key)",
                                                   logger: database.logger)
        return try await Self.first(rows)
    }

    public func counts() async throws -> [HistoryCopy.State: Int] {
        let rows = try await database.client.query("SELECT state, count(*) FROM history_copy GROUP BY state", logger: database.logger)
        var counts: [HistoryCopy.State: Int] = [:]
        for try await (state, n) in rows.decode((String, Int64).self) {
            if let state = HistoryCopy.State(rawValue: state) { counts[state] = Int(n) }
        }
        return counts
    }

    public func refreshOwnHistories(doneBefore: Date, at now: Date) async throws -> Int {
        let time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = 'queued', reason = NULL, pages_done = 0, pages_total = 0, scrobbles = 0,
                scrobbles_total = 0, queued_at = \(time), updated_at = \(time), lease_until = NULL, holder = NULL
            WHERE state = 'done' AND done_at < \(doneBefore.timeIntervalSince1970) AND name_key IN (SELECT key FROM list_entry WHERE is_me)
            RETURNING 1
            """, logger: database.logger)
        var count = 0
        for try await _ in rows.decode(Int32.self) { count += 1 }
        return count
    }
}
