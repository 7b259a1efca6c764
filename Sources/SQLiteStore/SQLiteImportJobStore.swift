import Foundation
import GRDB
import Stores
import VinylogueCore

/// `ImportJobStore` in SQLite (table `import_job`). Every change is one
/// write transaction: SQLite's one writer makes a claim atomic.
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
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM import_job WHERE id = ?", arguments: [db.lastInsertedRowID]),
                  let job = Self.job(row) else { throw SourceError.storage(detail: "the upload could not be queued") }
            return job
        }
    }

    public func claimNext(on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> ImportJob? {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            let waiting = try Row.fetchAll(db, sql: """
                SELECT id, state, lease_until, holder FROM import_job WHERE machine = ? AND state IN ('queued', 'importing')
                ORDER BY queued_at, id
                """, arguments: [machine])
            for row in waiting {
                let holding: String? = row["holder"]
                let gone = row["state"] == "importing" && holding.map(isGone) == true
                guard row["state"] == "queued" || (row["lease_until"] as Double? ?? 0) <= time || gone else { continue }
                let id: Int64 = row["id"]
                try db.execute(sql: """
                    UPDATE import_job SET state = 'importing', holder = ?, lease_until = ?, updated_at = ? WHERE id = ?
                    """, arguments: [holder, time + lease, time, id])
                return try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM import_job WHERE id = ?", arguments: [id]).flatMap(Self.job)
            }
            return nil
        }
    }

    public func renew(_ id: Int64, as holder: String, at now: Date, lease: TimeInterval) async throws -> Bool {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                UPDATE import_job SET lease_until = ?, updated_at = ? WHERE id = ? AND holder = ? AND state = 'importing'
                """, arguments: [time + lease, time, id, holder])
            return db.changesCount == 1
        }
    }

    public func finish(_ id: Int64, as holder: String, summary: String?, failure reason: String?, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: """
                UPDATE import_job SET state = ?, summary = ?, reason = ?, lease_until = NULL, holder = NULL, updated_at = ?
                WHERE id = ? AND holder = ? AND state = 'importing'
                """, arguments: [reason == nil ? "done" : "failed", summary, reason, now.timeIntervalSince1970, id, holder])
            return db.changesCount == 1
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
