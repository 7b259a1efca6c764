import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `ImportJobStore` in PostgreSQL (table `import_job`); an upload and its
/// job (`PostgresJobQueue`, for the machine holding the file) are queued in
/// one transaction.
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
        let time = now.timeIntervalSince1970, logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                INSERT INTO import_job(owner, name, file_name, path, bytes, machine, state, queued_at, updated_at)
                VALUES (\(owner.id), \(user.value), \(CopyText.withoutNUL(fileName)), \(path), \(bytes), \(machine), 'queued', \(time), \(time))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let job = try await Self.all(rows).first else { throw SourceError.storage(detail: "the upload could not be queued") }
            _ = try await PostgresJobQueue.enqueue(.upload, for: user, key: String(job.id), payload: "", machine: machine, notBefore: nil,
                                                   at: now, connection, logger)
            return job
        }
    }

    public func upload(_ id: Int64) async throws -> ImportJob? {
        try await Self.all(try await database.client.query("SELECT \(unescaped: Self.columns) FROM import_job WHERE id = \(id)",
                                                           logger: database.logger)).first
    }

    public func begin(_ id: Int64, at now: Date) async throws {
        try await database.client.query("""
            UPDATE import_job SET state = 'importing', updated_at = \(now.timeIntervalSince1970)
            WHERE id = \(id) AND state IN ('queued', 'importing')
            """, logger: database.logger)
    }

    public func finish(_ id: Int64, summary: String?, failure reason: String?, at now: Date) async throws {
        try await database.client.query("""
            UPDATE import_job SET state = \(reason == nil ? "done" : "failed"), summary = \(summary.map(CopyText.withoutNUL)),
                reason = \(reason.map(CopyText.withoutNUL)), updated_at = \(now.timeIntervalSince1970)
            WHERE id = \(id) AND state IN ('queued', 'importing')
            """, logger: database.logger)
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
