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

    typealias Columns = (String, String, String?, Int32, Int32, Int64, Double, Double, Double?)
    static let columns = "name, state, reason, pages_done, pages_total, scrobbles, queued_at, updated_at, lease_until"

    static func copy(_ c: Columns) -> HistoryCopy? {
        guard let user = Username(validating: c.0), let state = HistoryCopy.State(rawValue: c.1) else { return nil }
        return HistoryCopy(user: user, state: state, reason: c.2, pagesDone: Int(c.3), pagesTotal: Int(c.4), scrobbles: Int(c.5),
                           queuedAt: Date(timeIntervalSince1970: c.6), updatedAt: Date(timeIntervalSince1970: c.7),
                           leaseUntil: c.8.map(Date.init(timeIntervalSince1970:)))
    }

    static func first(_ rows: PostgresRowSequence) async throws -> HistoryCopy? {
        for try await row in rows.decode(Columns.self) { return copy(row) }
        return nil
    }

    static func queue(_ user: Username, at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let time = now.timeIntervalSince1970
        try await connection.query("""
            INSERT INTO history_copy(name_key, name, state, queued_at, updated_at) VALUES (\(user.key), \(user.value), 'queued', \(time), \(time))
            ON CONFLICT (name_key) DO UPDATE SET state = 'queued', reason = NULL, pages_done = 0, pages_total = 0, scrobbles = 0,
                queued_at = excluded.queued_at, updated_at = excluded.updated_at, lease_until = NULL, holder = NULL
            WHERE history_copy.state IN ('done', 'failed')
            """, logger: logger)
    }

    public func queue(_ user: Username, at now: Date) async throws -> HistoryCopy {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.queue(user, at: now, connection, logger)
            let rows = try await connection.query("SELECT \(unescaped: Self.columns) FROM history_copy WHERE name_key = \(user.key)", logger: logger)
            guard let copy = try await Self.first(rows) else { throw SourceError.storage(detail: "the copy of \(user.value) could not be queued") }
            return copy
        }
    }

    public func claimNext(at now: Date, lease: TimeInterval) async throws -> CopyClaim? {
        let holder = CopyClaim.newHolder(), time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = 'copying', holder = \(holder), lease_until = \(time + lease), updated_at = \(time), reason = NULL
            WHERE name_key = (SELECT name_key FROM history_copy
                              WHERE state = 'queued' OR (state = 'copying' AND lease_until <= \(time))
                              ORDER BY queued_at, name_key LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.columns)
            """, logger: database.logger)
        guard let copy = try await Self.first(rows) else { return nil }
        return CopyClaim(user: copy.user, holder: holder, copy: copy)
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

    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        let time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            UPDATE history_copy SET pages_done = \(Int32(clamping: pagesDone)), pages_total = \(Int32(clamping: pagesTotal)),
                scrobbles = \(Int64(scrobbles)), lease_until = \(time + lease), updated_at = \(time)
            WHERE name_key = \(claim.user.key) AND holder = \(claim.holder) AND state = 'copying'
            RETURNING 1
            """, logger: database.logger)
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    public func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool {
        let rows = try await database.client.query("""
            UPDATE history_copy SET state = \(reason == nil ? "done" : "failed"), reason = \(reason), lease_until = NULL, holder = NULL,
                updated_at = \(now.timeIntervalSince1970)
            WHERE name_key = \(claim.user.key) AND holder = \(claim.holder) AND state = 'copying'
            RETURNING 1
            """, logger: database.logger)
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    public func copy(of user: Username) async throws -> HistoryCopy? {
        let rows = try await database.client.query("SELECT \(unescaped: Self.columns) FROM history_copy WHERE name_key = \(user.key)",
                                                   logger: database.logger)
        return try await Self.first(rows)
    }
}
