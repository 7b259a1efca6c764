import Foundation
import GRDB
import Stores
import VinylogueCore

/// `ImportJobStore` in SQLite (table `import_job`); an upload and its job
/// (`SQLiteJobQueue`) are queued in one write transaction.
public struct SQLiteImportJobStore: ImportJobStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("import jobs") { db in
            try db.execute(sql: """
                CREATE TABLE import_job (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    file_name TEXT NOT NULL,
                    path TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    machine TEXT NOT NULL,
                    state TEXT NOT NULL,
                    summary TEXT,
                    reason TEXT,
                    queued_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    lease_until REAL,
                    holder TEXT);
                CREATE INDEX import_job_waiting ON import_job(machine, state, queued_at);
                CREATE INDEX import_job_owner ON import_job(owner, id);
                """)
        }
    }

    /// What each batch of an import stored, recorded with the batch
    /// (`StoredBatches`), so a resumed import counts it as its own.
    /// Registered after every earlier migration.
    static func registerStoredBatchesMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("import job stored batches") { db in
            try db.execute(sql: "ALTER TABLE import_job ADD COLUMN stored_batches TEXT NOT NULL DEFAULT ''")
        }
    }

    static let columns = "id, owner, name, file_name, path, bytes, machine, state, summary, reason, queued_at, updated_at, stored_batches"

    static func job(_ row: Row) -> ImportJob? {
        guard let user = Username(validating: row["name"]), let state = ImportJob.State(rawValue: row["state"]) else { return nil }
        return ImportJob(id: row["id"], owner: .account(row["owner"]), user: user, fileName: row["file_name"], path: row["path"],
                         bytes: row["bytes"], machine: row["machine"], state: state, summary: row["summary"], reason: row["reason"],
                         queuedAt: Date(timeIntervalSince1970: row["queued_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
                         stored: StoredBatches(text: row["stored_batches"]))
    }

    public func queue(owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
                      at now: Date) async throws -> ImportJob {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO import_job(owner, name, file_name, path, bytes, machine, state, queued_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)
                """, arguments: [owner.id, user.value, fileName, path, bytes, machine, time, time])
            let id = db.lastInsertedRowID
            _ = try SQLiteJobQueue.enqueue(.upload, for: user, key: String(id), payload: "", machine: machine, notBefore: nil, at: now, in: db)
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM import_job WHERE id = ?", arguments: [id]),
                  let job = Self.job(row) else { throw SourceError.storage(detail: "the upload could not be queued") }
            return job
        }
    }

    public func upload(_ id: Int64) async throws -> ImportJob? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM import_job WHERE id = ?", arguments: [id]).flatMap(Self.job)
        }
    }

    public func begin(_ id: Int64, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE import_job SET state = 'importing', updated_at = ? WHERE id = ? AND state IN ('queued', 'importing')",
                           arguments: [now.timeIntervalSince1970, id])
        }
    }

    public func finish(_ id: Int64, summary: String?, failure reason: String?, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE import_job SET state = ?, summary = ?, reason = ?, updated_at = ? WHERE id = ? AND state IN ('queued', 'importing')
                """, arguments: [reason == nil ? "done" : "failed", summary, reason, now.timeIntervalSince1970, id])
        }
    }

    public func jobs(of owner: ListOwner, limit: Int) async throws -> [ImportJob] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM import_job WHERE owner = ? ORDER BY id DESC LIMIT ?",
                             arguments: [owner.id, limit]).compactMap(Self.job)
        }
    }

    public func waiting(on machine: String) async throws -> Int {
        try await writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM import_job WHERE machine = ? AND state IN ('queued', 'importing')",
                             arguments: [machine]) ?? 0
        }
    }
}
