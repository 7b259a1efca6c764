import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `JobQueue` in PostgreSQL (table `job`), shared by a fleet: a claim
/// locks the waiting rows it looks at with `SKIP LOCKED`, so instances
/// claiming at once each take a different job.
public struct PostgresJobQueue: JobQueue {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    static let tables = [
        """
        CREATE TABLE job (
            id BIGSERIAL PRIMARY KEY,
            kind TEXT NOT NULL,
            person TEXT NOT NULL,
            key TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '',
            machine TEXT,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            holder TEXT,
            lease_until DOUBLE PRECISION,
            not_before DOUBLE PRECISION NOT NULL,
            reason TEXT,
            queued_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL)
        """,
        "CREATE UNIQUE INDEX job_unfinished ON job(kind, key) WHERE state IN ('queued', 'running')",
        "CREATE INDEX job_due ON job(state, not_before, id)",
        "CREATE INDEX job_person ON job(person)",
    ]

    /// The uploads queued in `import_job`'s own columns before the queue
    /// existed, moved into it; their claim columns dropped (the upload's
    /// row keeps only what the upload is).
    static let movedUploads: PostgresDatabase.Migration.Work = { connection, logger, _ in
        var waiting: [(Int64, String, String, Double, Double)] = []
        let rows = try await connection.query("""
            SELECT id, name, machine, queued_at, updated_at FROM import_job WHERE state IN ('queued', 'importing') ORDER BY id
            """, logger: logger)
        for try await row in rows.decode((Int64, String, String, Double, Double).self) { waiting.append(row) }
        for (id, name, machine, queuedAt, updatedAt) in waiting {
            // Names fold as `Username.key` does.
            guard let user = Username(validating: name) else { continue }
            try await connection.query("""
                INSERT INTO job(kind, person, key, machine, state, not_before, queued_at, updated_at)
                VALUES (\(JobKind.upload.rawValue), \(user.key), \(String(id)), \(machine), 'queued', \(queuedAt), \(queuedAt), \(updatedAt))
                """, logger: logger)
        }
        try await connection.query("UPDATE import_job SET state = 'queued' WHERE state = 'importing'", logger: logger)
        try await connection.query("ALTER TABLE import_job DROP COLUMN holder, DROP COLUMN lease_until", logger: logger)
    }

    typealias Columns = (Int64, String, String, String, String, String?, String, Int32, String?, Double?, Double, String?, Double, Double)
    static let columns = "id, kind, person, key, payload, machine, state, attempts, holder, lease_until, not_before, reason, queued_at, updated_at"

    static func job(_ c: Columns) -> DurableJob? {
        guard let state = DurableJob.State(rawValue: c.6) else { return nil }
        return DurableJob(id: c.0, kind: JobKind(rawValue: c.1), person: c.2, key: c.3, payload: c.4, machine: c.5, state: state,
                          attempts: Int(c.7), holder: c.8, leaseUntil: c.9.map(Date.init(timeIntervalSince1970:)),
                          notBefore: Date(timeIntervalSince1970: c.10), reason: c.11, queuedAt: Date(timeIntervalSince1970: c.12),
                          updatedAt: Date(timeIntervalSince1970: c.13))
    }

    static func all(_ rows: PostgresRowSequence) async throws -> [DurableJob] {
        var jobs: [DurableJob] = []
        for try await row in rows.decode(Columns.self) { if let job = job(row) { jobs.append(job) } }
        return jobs
    }

    /// Queues a job on `connection`, inside the caller's transaction (see
    /// `JobQueue.enqueue`): for stores that queue their own jobs with their rows.
    static func enqueue(_ kind: JobKind, for person: Username, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws -> DurableJob {
        try await enqueue(kind, personKey: person.key, key: key, payload: payload, machine: machine, notBefore: notBefore, at: now,
                          connection, logger)
    }

    /// `enqueue` for a person given by their name key: "" for the
    /// household, whose jobs (its digests) belong to no account.
    static func enqueue(_ kind: JobKind, personKey: String, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws -> DurableJob {
        let time = now.timeIntervalSince1970, due = notBefore?.timeIntervalSince1970 ?? time
        let inserted = try await all(try await connection.query("""
            INSERT INTO job(kind, person, key, payload, machine, state, not_before, queued_at, updated_at)
            VALUES (\(kind.rawValue), \(personKey), \(key), \(CopyText.withoutNUL(payload)), \(machine), 'queued', \(due), \(time), \(time))
            ON CONFLICT (kind, key) WHERE state IN ('queued', 'running') DO NOTHING
            RETURNING \(unescaped: columns)
            """, logger: logger))
        if let job = inserted.first { return job }
        let existing = try await all(try await connection.query("""
            SELECT \(unescaped: columns) FROM job WHERE kind = \(kind.rawValue) AND key = \(key) AND state IN ('queued', 'running')
            """, logger: logger))
        guard let job = existing.first else { throw SourceError.storage(detail: "a job could not be queued") }
        return job
    }

    public func enqueue(_ kind: JobKind, for person: Username, key: String, payload: String, machine: String?, notBefore: Date?,
                        at now: Date) async throws -> DurableJob {
        try await database.client.withTransaction(logger: database.logger) { connection in
            try await Self.enqueue(kind, for: person, key: key, payload: payload, machine: machine, notBefore: notBefore, at: now,
                                   connection, database.logger)
        }
    }

    public func claimNext(of kinds: Set<JobKind>, on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim? {
        guard !kinds.isEmpty else { return nil }
        let names = kinds.map(\.rawValue), logger = database.logger, time = now.timeIntervalSince1970
        return try await database.client.withTransaction(logger: logger) { connection in
            let candidates = try await Self.all(try await connection.query("""
                SELECT \(unescaped: Self.columns) FROM job
                WHERE kind = ANY(\(names)) AND (machine IS NULL OR machine = \(machine))
                  AND ((state = 'queued' AND not_before <= \(time)) OR state = 'running')
                ORDER BY not_before, id LIMIT 200 FOR UPDATE SKIP LOCKED
                """, logger: logger))
            guard let chosen = candidates.first(where: { $0.isClaimable(at: now, takingOverFrom: isGone) }) else { return nil }
            return try await Self.take(chosen.id, as: holder, at: now, lease: lease, connection, logger)
        }
    }

    /// Claims the job `id` on `connection`, in the caller's transaction
    /// (which has locked its row and checked that it may be claimed).
    static func take(_ id: Int64, as holder: String, at now: Date, lease: TimeInterval, _ connection: PostgresConnection,
                     _ logger: Logger) async throws -> JobClaim? {
        let time = now.timeIntervalSince1970
        let claimed = try await all(try await connection.query("""
            UPDATE job SET state = 'running', holder = \(holder), lease_until = \(time + lease), attempts = attempts + 1, updated_at = \(time)
            WHERE id = \(id) RETURNING \(unescaped: columns)
            """, logger: logger))
        return claimed.first.map { JobClaim(job: $0, holder: holder) }
    }

    /// Claims the unfinished job of `kind` and `key` on `connection`, in
    /// the caller's transaction (see `JobQueue.claim`); its row is locked
    /// until the transaction ends.
    static func claim(_ kind: JobKind, key: String, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: (String) -> Bool, _ connection: PostgresConnection, _ logger: Logger) async throws -> JobClaim? {
        let found = try await all(try await connection.query("""
            SELECT \(unescaped: columns) FROM job WHERE kind = \(kind.rawValue) AND key = \(key) AND state IN ('queued', 'running')
            FOR UPDATE
            """, logger: logger))
        guard var job = found.first else { return nil }
        // Due or not: a person's own request runs at once.
        job.notBefore = min(job.notBefore, now)
        guard job.isClaimable(at: now, takingOverFrom: isGone) else { return nil }
        return try await take(job.id, as: holder, at: now, lease: lease, connection, logger)
    }

    public func claim(_ kind: JobKind, key: String, as holder: String, at now: Date, lease: TimeInterval,
                      takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim? {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.claim(kind, key: key, as: holder, at: now, lease: lease, takingOverFrom: isGone, connection, logger)
        }
    }

    /// Whether `claim`'s job is still claimed by its holder and running,
    /// on `connection` in the caller's transaction: the fence a job's own
    /// rows are written under. Its row is locked until the transaction
    /// ends, so a deletion of it waits, or has won already.
    static func holds(_ claim: JobClaim, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        try await PostgresHistoryCopyStore.changed(try await connection.query("""
            SELECT 1 FROM job WHERE id = \(claim.job.id) AND holder = \(claim.holder) AND state = 'running' FOR UPDATE
            """, logger: logger))
    }

    public func renew(_ claim: JobClaim, at now: Date, lease: TimeInterval) async throws -> Bool {
        let time = now.timeIntervalSince1970
        let rows = try await database.client.query("""
            UPDATE job SET lease_until = \(time + lease), updated_at = \(time)
            WHERE id = \(claim.job.id) AND holder = \(claim.holder) AND state = 'running' RETURNING 1
            """, logger: database.logger)
        return try await PostgresHistoryCopyStore.changed(rows)
    }

    public func end(_ claim: JobClaim, as ending: JobEnding, at now: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.client.withConnection { connection in
            try await Self.end(claim, as: ending, at: now, connection, logger)
        }
    }

    /// Ends a claimed job on `connection` (see `JobQueue.end`).
    @discardableResult
    static func end(_ claim: JobClaim, as ending: JobEnding, at now: Date, _ connection: PostgresConnection,
                    _ logger: Logger) async throws -> Bool {
        let notBefore: Double? = if case .retry(let at, _) = ending { at.timeIntervalSince1970 } else { nil }
        let rows = try await connection.query("""
            UPDATE job SET state = \(ending.state.rawValue), reason = coalesce(\(ending.reason.map(CopyText.withoutNUL)), reason),
                holder = NULL, lease_until = NULL, not_before = coalesce(\(notBefore), not_before),
                attempts = attempts - \(Int32(ending == .stopped ? 1 : 0)), updated_at = \(now.timeIntervalSince1970)
            WHERE id = \(claim.job.id) AND holder = \(claim.holder) AND state = 'running' RETURNING 1
            """, logger: logger)
        return try await PostgresHistoryCopyStore.changed(rows)
    }

    public func job(_ id: Int64) async throws -> DurableJob? {
        try await Self.all(try await database.client.query("SELECT \(unescaped: Self.columns) FROM job WHERE id = \(id)",
                                                           logger: database.logger)).first
    }

    public func jobs(of kind: JobKind, key: String) async throws -> [DurableJob] {
        try await Self.all(try await database.client.query("""
            SELECT \(unescaped: Self.columns) FROM job WHERE kind = \(kind.rawValue) AND key = \(key) ORDER BY id DESC
            """, logger: database.logger))
    }

    public func nextDue(of kinds: Set<JobKind>, on machine: String) async throws -> Date? {
        guard !kinds.isEmpty else { return nil }
        let names = kinds.map(\.rawValue)
        // A running job's lease is when it may next be taken over.
        let rows = try await database.client.query("""
            SELECT min(CASE state WHEN 'queued' THEN not_before ELSE lease_until END) FROM job
            WHERE kind = ANY(\(names)) AND (machine IS NULL OR machine = \(machine)) AND state IN ('queued', 'running')
            """, logger: database.logger)
        for try await due in rows.decode(Double?.self) { return due.map(Date.init(timeIntervalSince1970:)) }
        return nil
    }

    public func runningHolders(of kinds: Set<JobKind>, on machine: String) async throws -> Set<String> {
        guard !kinds.isEmpty else { return [] }
        let names = kinds.map(\.rawValue)
        let rows = try await database.client.query("""
            SELECT DISTINCT holder FROM job
            WHERE kind = ANY(\(names)) AND (machine IS NULL OR machine = \(machine)) AND state = 'running' AND holder IS NOT NULL
            """, logger: database.logger)
        var holders = Set<String>()
        for try await holder in rows.decode(String.self) { holders.insert(holder) }
        return holders
    }

    public func counts(of kind: JobKind) async throws -> [DurableJob.State: Int] {
        var counts: [DurableJob.State: Int] = [:]
        let rows = try await database.client.query("SELECT state, count(*) FROM job WHERE kind = \(kind.rawValue) GROUP BY state",
                                                   logger: database.logger)
        for try await (state, n) in rows.decode((String, Int64).self) {
            if let state = DurableJob.State(rawValue: state) { counts[state] = Int(n) }
        }
        return counts
    }

    public func cancel(of person: Username, kinds: Set<JobKind>?) async throws -> Int {
        let rows: PostgresRowSequence
        if let kinds {
            rows = try await database.client.query("""
                DELETE FROM job WHERE person = \(person.key) AND kind = ANY(\(kinds.map(\.rawValue))) RETURNING 1
                """, logger: database.logger)
        } else {
            rows = try await database.client.query("DELETE FROM job WHERE person = \(person.key) RETURNING 1", logger: database.logger)
        }
        var n = 0
        for try await _ in rows.decode(Int32.self) { n += 1 }
        return n
    }

    public func forget(endedBefore date: Date) async throws -> Int {
        let rows = try await database.client.query("""
            DELETE FROM job WHERE state IN ('done', 'failed') AND updated_at < \(date.timeIntervalSince1970) RETURNING 1
            """, logger: database.logger)
        var n = 0
        for try await _ in rows.decode(Int32.self) { n += 1 }
        return n
    }
}
