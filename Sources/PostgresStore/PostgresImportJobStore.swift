import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `ImportJobStore` in PostgreSQL (table `import_job`), shared by a
/// fleet: each upload is claimed only on the machine that holds its file,
/// the waiting one found with `SKIP LOCKED` and locked while its holder is
/// judged.
public struct PostgresImportJobStore: ImportJobStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    static let tables = [
        """
        CREATE TABLE import_job (
            id BIGSERIAL PRIMARY KEY,
            owner BIGINT NOT NULL,
            name TEXT NOT NULL,
            file_name TEXT NOT NULL,
            path TEXT NOT NULL,
            bytes BIGINT NOT NULL,
            machine TEXT NOT NULL,
            state TEXT NOT NULL,
            summary TEXT,
            reason TEXT,
            queued_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            lease_until DOUBLE PRECISION,
            holder TEXT)
        """,
        "CREATE INDEX import_job_waiting ON import_job(machine, state, queued_at)",
        "CREATE INDEX import_job_owner ON import_job(owner, id)",
    ]

    typealias Columns = (Int64, Int64, String, String, String, Int64, String, String, String?, String?, Double, Double, String)
    static let columns = "id, owner, name, file_name, path, bytes, machine, state, summary, reason, queued_at, updated_at, stored_batches"

    static func job(_ c: Columns) -> ImportJob? {
        guard let user = Username(validating: c.2), let state = ImportJob.State(rawValue: c.7) else { return nil }
        return ImportJob(id: c.0, owner: .account(c.1), user: user, fileName: c.3, path: c.4, bytes: c.5, machine: c.6, state: state,
                         summary: c.8, reason: c.9, queuedAt: Date(timeIntervalSince1970: c.10), updatedAt: Date(timeIntervalSince1970: c.11),
                         stored: StoredBatches(text: c.12))
    }

    static func all(_ rows: PostgresRowSequence) async throws -> [ImportJob] {
        var jobs: [ImportJob] = []
        for try await row in rows.decode(Columns.self) { if let job = job(row) { jobs.append(job) } }
        return jobs
    }

    public func queue(owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
                      at now: Date) async throws -> ImportJob {
        let time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            INSERT INTO import_job(owner, name, file_name, path, bytes, machine, state, queued_at, updated_at)
            VALUES (\(owner.id), \(user.value), \(CopyText.withoutNUL(fileName)), \(path), \(bytes), \(machine), 'queued', \(time), \(time))
            RETURNING \(unescaped: Self.columns)
            """, logger: database.logger)
        guard let job = try await Self.all(rows).first else { throw SourceError.storage(detail: "the upload could not be queued") }
        return job
    }

    public func claimNext(on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> ImportJob? {
        let logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                SELECT id, state, lease_until, holder FROM import_job WHERE machine = \(machine) AND state IN ('queued', 'importing')
                ORDER BY queued_at, id FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var chosen: Int64?
            for try await (id, state, leaseUntil, holding) in rows.decode((Int64, String, Double?, String?).self) where chosen == nil {
                let gone = state == "importing" && holding.map(isGone) == true
                if state == "queued" || (leaseUntil ?? 0) <= time || gone { chosen = id }
            }
            guard let chosen else { return nil }
            let claimed = try await connection.query("""
                UPDATE import_job SET state = 'importing', holder = \(holder), lease_until = \(time + lease), updated_at = \(time)
                WHERE id = \(chosen) RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            return try await Self.all(claimed).first
        }
    }

    public func renew(_ id: Int64, as holder: String, at now: Date, lease: TimeInterval) async throws -> Bool {
        let time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            UPDATE import_job SET lease_until = \(time + lease), updated_at = \(time)
            WHERE id = \(id) AND holder = \(holder) AND state = 'importing' RETURNING 1
            """, logger: database.logger)
        return try await PostgresHistoryCopyStore.changed(rows)
    }

    public func finish(_ id: Int64, as holder: String, summary: String?, failure reason: String?, at now: Date) async throws -> Bool {
        let rows = try await database.client.query("""
            UPDATE import_job SET state = \(reason == nil ? "done" : "failed"), summary = \(summary.map(CopyText.withoutNUL)),
                reason = \(reason.map(CopyText.withoutNUL)), lease_until = NULL, holder = NULL, updated_at = \(now.timeIntervalSince1970)
            WHERE id = \(id) AND holder = \(holder) AND state = 'importing' RETURNING 1
            """, logger: database.logger)
        return try await PostgresHistoryCopyStore.changed(rows)
    }

    public func jobs(of owner: ListOwner, limit: Int) async throws -> [ImportJob] {
        let rows = try await database.client.query("""
            SELECT \(unescaped: Self.columns) FROM import_job WHERE owner = \(owner.id) ORDER BY id DESC LIMIT \(Int64(limit))
            """, logger: database.logger)
        return try await Self.all(rows)
    }

    public func waiting(on machine: String) async throws -> Int {
        let rows = try await database.client.query(
            "SELECT count(*) FROM import_job WHERE machine = \(machine) AND state IN ('queued', 'importing')", logger: database.logger)
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return 0
    }
}
