import Foundation
import GRDB
import Stores
import VinylogueCore

/// `JobQueue` in SQLite (table `job`). Every change is one write
/// transaction: SQLite's one writer makes a claim atomic.
public struct SQLiteJobQueue: JobQueue {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    /// The table, and the uploads queued in `import_job`'s own columns
    /// before it existed moved into it (their claim columns dropped: the
    /// upload's row keeps only what the upload is). Registered after every
    /// earlier migration.
    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("one job queue") { db in
            try db.execute(sql: """
                CREATE TABLE job (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL,
                    person TEXT NOT NULL,
                    key TEXT NOT NULL,
                    payload TEXT NOT NULL DEFAULT '',
                    machine TEXT,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    holder TEXT,
                    lease_until REAL,
                    not_before REAL NOT NULL,
                    reason TEXT,
                    queued_at REAL NOT NULL,
                    updated_at REAL NOT NULL);
                CREATE UNIQUE INDEX job_unfinished ON job(kind, key) WHERE state IN ('queued', 'running');
                CREATE INDEX job_due ON job(state, not_before, id);
                CREATE INDEX job_person ON job(person);
                """)
            // Names fold as `Username.key` does (SQL's lower() knows only ASCII).
            for row in try Row.fetchAll(db, sql: """
                SELECT id, name, machine, queued_at, updated_at FROM import_job WHERE state IN ('queued', 'importing') ORDER BY id
                """) {
                guard let user = Username(validating: row["name"]) else { continue }
                let id: Int64 = row["id"]
                try db.execute(sql: """
                    INSERT INTO job(kind, person, key, machine, state, not_before, queued_at, updated_at)
                    VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)
                    """, arguments: [JobKind.upload.rawValue, user.key, String(id), row["machine"] as String, row["queued_at"] as Double,
                                    row["queued_at"] as Double, row["updated_at"] as Double])
            }
            try db.execute(sql: """
                UPDATE import_job SET state = 'queued' WHERE state = 'importing';
                ALTER TABLE import_job DROP COLUMN holder;
                ALTER TABLE import_job DROP COLUMN lease_until;
                """)
        }
    }

    static let columns = "id, kind, person, key, payload, machine, state, attempts, holder, lease_until, not_before, reason, queued_at, updated_at"

    static func job(_ row: Row) -> DurableJob? {
        guard let state = DurableJob.State(rawValue: row["state"]) else { return nil }
        return DurableJob(id: row["id"], kind: JobKind(rawValue: row["kind"]), person: row["person"], key: row["key"], payload: row["payload"],
                          machine: row["machine"], state: state, attempts: row["attempts"], holder: row["holder"],
                          leaseUntil: (row["lease_until"] as Double?).map(Date.init(timeIntervalSince1970:)),
                          notBefore: Date(timeIntervalSince1970: row["not_before"]), reason: row["reason"],
                          queuedAt: Date(timeIntervalSince1970: row["queued_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    /// Queues a job inside a write (see `JobQueue.enqueue`): for stores
    /// that queue their own jobs in the same transaction as their rows.
    static func enqueue(_ kind: JobKind, for person: Username, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date, in db: Database) throws -> DurableJob {
        try enqueue(kind, personKey: person.key, key: key, payload: payload, machine: machine, notBefore: notBefore, at: now, in: db)
    }

    /// `enqueue` for a person given by their name key: "" for the
    /// household, whose jobs (its digests) belong to no account.
    static func enqueue(_ kind: JobKind, personKey: String, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date, in db: Database) throws -> DurableJob {
        let time = now.timeIntervalSince1970
        try db.execute(sql: """
            INSERT INTO job(kind, person, key, payload, machine, state, not_before, queued_at, updated_at)
            VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)
            ON CONFLICT(kind, key) WHERE state IN ('queued', 'running') DO NOTHING
            """, arguments: [kind.rawValue, personKey, key, payload, machine, notBefore?.timeIntervalSince1970 ?? time, time, time])
        guard let row = try Row.fetchOne(db, sql: """
            SELECT \(columns) FROM job WHERE kind = ? AND key = ? AND state IN ('queued', 'running')
            """, arguments: [kind.rawValue, key]), let job = job(row) else {
            throw SourceError.storage(detail: "a job could not be queued")
        }
        return job
    }

    public func enqueue(_ kind: JobKind, for person: Username, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date) async throws -> DurableJob {
        try await writer.write { db in
            try Self.enqueue(kind, for: person, key: key, payload: payload, machine: machine, notBefore: notBefore, at: now, in: db)
        }
    }

    public func claimNext(of kinds: Set<JobKind>, on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim? {
        guard !kinds.isEmpty else { return nil }
        let names = kinds.map(\.rawValue)
        return try await writer.write { db in
            let time = now.timeIntervalSince1970
            let candidates = try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM job
                WHERE kind IN (\(databaseQuestionMarks(count: names.count))) AND (machine IS NULL OR machine = ?)
                  AND ((state = 'queued' AND not_before <= ?) OR state = 'running')
                ORDER BY not_before, id
                """, arguments: StatementArguments(names) + [machine, time]).compactMap(Self.job)
            guard let chosen = candidates.first(where: { $0.isClaimable(at: now, takingOverFrom: isGone) }) else { return nil }
            return try Self.take(chosen.id, as: holder, at: now, lease: lease, in: db)
        }
    }

    /// Claims the job `id` inside a write (its claimability checked by the caller).
    static func take(_ id: Int64, as holder: String, at now: Date, lease: TimeInterval, in db: Database) throws -> JobClaim? {
        let time = now.timeIntervalSince1970
        try db.execute(sql: """
            UPDATE job SET state = 'running', holder = ?, lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?
            """, arguments: [holder, time + lease, time, id])
        guard let row = try Row.fetchOne(db, sql: "SELECT \(columns) FROM job WHERE id = ?", arguments: [id]),
              let job = job(row) else { return nil }
        return JobClaim(job: job, holder: holder)
    }

    /// Claims the unfinished job of `kind` and `key` inside a write (see `JobQueue.claim`).
    static func claim(_ kind: JobKind, key: String, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: (String) -> Bool, in db: Database) throws -> JobClaim? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT \(columns) FROM job WHERE kind = ? AND key = ? AND state IN ('queued', 'running')
            """, arguments: [kind.rawValue, key]), var job = job(row) else { return nil }
        // Due or not: a person's own request runs at once.
        job.notBefore = min(job.notBefore, now)
        guard job.isClaimable(at: now, takingOverFrom: isGone) else { return nil }
        return try take(job.id, as: holder, at: now, lease: lease, in: db)
    }

    public func claim(_ kind: JobKind, key: String, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim? {
        try await writer.write { db in
            try Self.claim(kind, key: key, as: holder, at: now, lease: lease, takingOverFrom: isGone, in: db)
        }
    }

    /// Whether `claim`'s job is still claimed by its holder and running,
    /// inside a write: the fence a job's own rows are written under.
    static func holds(_ claim: JobClaim, in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM job WHERE id = ? AND holder = ? AND state = 'running')",
                          arguments: [claim.job.id, claim.holder]) ?? false
    }

    public func renew(_ claim: JobClaim, at now: Date, lease: TimeInterval) async throws -> Bool {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            try db.execute(sql: """
                UPDATE job SET lease_until = ?, updated_at = ? WHERE id = ? AND holder = ? AND state = 'running'
                """, arguments: [time + lease, time, claim.job.id, claim.holder])
            return db.changesCount == 1
        }
    }

    public func end(_ claim: JobClaim, as ending: JobEnding, at now: Date) async throws -> Bool {
        try await writer.write { db in try Self.end(claim, as: ending, at: now, in: db) }
    }

    /// Ends a claimed job inside a write (see `JobQueue.end`).
    @discardableResult
    static func end(_ claim: JobClaim, as ending: JobEnding, at now: Date, in db: Database) throws -> Bool {
        let time = now.timeIntervalSince1970
        let notBefore: Double? = if case .retry(let at, _) = ending { at.timeIntervalSince1970 } else { nil }
        try db.execute(sql: """
            UPDATE job SET state = ?, reason = coalesce(?, reason), holder = NULL, lease_until = NULL,
                not_before = coalesce(?, not_before), attempts = attempts - ?, updated_at = ?
            WHERE id = ? AND holder = ? AND state = 'running'
            """, arguments: [ending.state.rawValue, ending.reason, notBefore, ending == .stopped ? 1 : 0, time, claim.job.id, claim.holder])
        return db.changesCount == 1
    }

    public func job(_ id: Int64) async throws -> DurableJob? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM job WHERE id = ?", arguments: [id]).flatMap(Self.job)
        }
    }

    public func jobs(of kind: JobKind, key: String) async throws -> [DurableJob] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM job WHERE kind = ? AND key = ? ORDER BY id DESC",
                             arguments: [kind.rawValue, key]).compactMap(Self.job)
        }
    }

    public func nextDue(of kinds: Set<JobKind>, on machine: String) async throws -> Date? {
        guard !kinds.isEmpty else { return nil }
        let names = kinds.map(\.rawValue)
        return try await writer.read { db in
            // A running job's lease is when it may next be taken over.
            try Double.fetchOne(db, sql: """
                SELECT min(CASE state WHEN 'queued' THEN not_before ELSE lease_until END) FROM job
                WHERE kind IN (\(databaseQuestionMarks(count: names.count))) AND (machine IS NULL OR machine = ?)
                  AND state IN ('queued', 'running')
                """, arguments: StatementArguments(names) + [machine]).map(Date.init(timeIntervalSince1970:))
        }
    }

    public func runningHolders(of kinds: Set<JobKind>, on machine: String) async throws -> Set<String> {
        guard !kinds.isEmpty else { return [] }
        let names = kinds.map(\.rawValue)
        return try await writer.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT holder FROM job
                WHERE kind IN (\(databaseQuestionMarks(count: names.count))) AND (machine IS NULL OR machine = ?)
                  AND state = 'running' AND holder IS NOT NULL
                """, arguments: StatementArguments(names) + [machine]))
        }
    }

    public func counts(of kind: JobKind) async throws -> [DurableJob.State: Int] {
        try await writer.read { db in
            var counts: [DurableJob.State: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM job WHERE kind = ? GROUP BY state",
                                        arguments: [kind.rawValue]) {
                if let state = DurableJob.State(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    public func cancel(of person: Username, kinds: Set<JobKind>?) async throws -> Int {
        try await writer.write { db in
            if let kinds {
                let names = kinds.map(\.rawValue)
                guard !names.isEmpty else { return 0 }
                try db.execute(sql: "DELETE FROM job WHERE person = ? AND kind IN (\(databaseQuestionMarks(count: names.count)))",
                               arguments: [person.key] + StatementArguments(names))
            } else {
                try db.execute(sql: "DELETE FROM job WHERE person = ?", arguments: [person.key])
            }
            return db.changesCount
        }
    }

    public func forget(endedBefore date: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM job WHERE state IN ('done', 'failed') AND updated_at < ?", arguments: [date.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
