import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `DigestStore` in PostgreSQL (tables `digest_subscription`,
/// `digest_send`; each email's `digest` job in `job`), shared by a fleet:
/// queueing a week's digest twice adds nothing (`UNIQUE (owner, kind,
/// key)`), and the job queue gives each email to one sender. A change to
/// an email locks its job's row before the email's, the order the
/// account eraser takes them in.
public struct PostgresDigestStore: DigestStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    static let tables = [
        """
        CREATE TABLE digest_subscription (
            owner BIGINT PRIMARY KEY,
            address TEXT NOT NULL,
            weekday INTEGER NOT NULL,
            hour INTEGER NOT NULL,
            years INTEGER NOT NULL,
            token TEXT NOT NULL UNIQUE,
            confirmed_at DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL)
        """,
        """
        CREATE TABLE digest_send (
            id BIGSERIAL PRIMARY KEY,
            owner BIGINT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            address TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            due_at DOUBLE PRECISION NOT NULL,
            lease_until DOUBLE PRECISION,
            holder TEXT,
            reason TEXT,
            queued_at DOUBLE PRECISION NOT NULL,
            sent_at DOUBLE PRECISION,
            UNIQUE (owner, kind, key))
        """,
        "CREATE INDEX digest_send_due ON digest_send(state, due_at)",
    ]

    /// The emails' claim columns given up to the one job queue: each email
    /// waiting or being sent (by a sender that may have died) becomes a
    /// queued `digest` job, due when the email was.
    static let movedToJobQueue: PostgresDatabase.Migration.Work = { connection, logger, _ in
        var waiting: [(Int64, Int64, Double, Double)] = []
        let rows = try await connection.query("""
            SELECT id, owner, due_at, queued_at FROM digest_send WHERE state IN ('waiting', 'sending') ORDER BY due_at, id
            """, logger: logger)
        for try await row in rows.decode((Int64, Int64, Double, Double).self) { waiting.append(row) }
        for (id, owner, due, queued) in waiting {
            _ = try await PostgresJobQueue.enqueue(.digest, personKey: try await PostgresDigestStore.person(of: ListOwner(id: owner), connection, logger) ?? "",
                                                   key: String(id), payload: "", machine: nil, notBefore: Date(timeIntervalSince1970: due),
                                                   at: Date(timeIntervalSince1970: queued), connection, logger)
        }
        try await connection.query("UPDATE digest_send SET state = 'waiting' WHERE state = 'sending'", logger: logger)
        try await connection.query("ALTER TABLE digest_send DROP COLUMN holder, DROP COLUMN lease_until", logger: logger)
    }

    /// Whose an owner's email jobs are: the account's name key (erasing
    /// the account deletes them), the household's ""; nil when the account
    /// is gone. The account's row is locked `FOR SHARE` until the caller's
    /// transaction ends: an erasure, which locks it first
    /// (`PostgresAccountEraser`), either waits for what this queues and
    /// deletes it, or has already won and this finds no account.
    static func person(of owner: ListOwner, _ connection: PostgresConnection, _ logger: Logger) async throws -> String? {
        guard owner != .household else { return "" }
        for try await key in try await connection.query("SELECT name_key FROM account WHERE id = \(owner.id) FOR SHARE", logger: logger)
            .decode(String.self) { return key }
        return nil
    }

    typealias SubscriptionColumns = (Int64, String, Int32, Int32, Int32, String, Double?, Double)
    static let subscriptionColumns = "owner, address, weekday, hour, years, token, confirmed_at, updated_at"
    typealias SendColumns = (Int64, Int64, String, String, String, String, Int32, Double, String?, Double, Double?)
    static let sendColumns = "id, owner, kind, key, address, state, attempts, due_at, reason, queued_at, sent_at"

    static func subscriptions(_ rows: PostgresRowSequence) async throws -> [DigestSubscription] {
        var found: [DigestSubscription] = []
        for try await c in rows.decode(SubscriptionColumns.self) {
            found.append(DigestSubscription(owner: ListOwner(id: c.0), address: c.1, weekday: Int(c.2), hour: Int(c.3), years: Int(c.4),
                                            token: c.5, confirmedAt: c.6.map(Date.init(timeIntervalSince1970:)),
                                            updatedAt: Date(timeIntervalSince1970: c.7)))
        }
        return found
    }

    static func sends(_ rows: PostgresRowSequence) async throws -> [DigestSend] {
        var found: [DigestSend] = []
        for try await c in rows.decode(SendColumns.self) {
            guard let kind = DigestSend.Kind(rawValue: c.2), let state = DigestSend.State(rawValue: c.5) else { continue }
            found.append(DigestSend(id: c.0, owner: ListOwner(id: c.1), kind: kind, key: c.3, address: c.4, state: state, attempts: Int(c.6),
                                    dueAt: Date(timeIntervalSince1970: c.7), reason: c.8, queuedAt: Date(timeIntervalSince1970: c.9),
                                    sentAt: c.10.map(Date.init(timeIntervalSince1970:))))
        }
        return found
    }

    public func subscription(of owner: ListOwner) async throws -> DigestSubscription? {
        try await Self.subscriptions(database.client.query("""
            SELECT \(unescaped: Self.subscriptionColumns) FROM digest_subscription WHERE owner = \(owner.id)
            """, logger: database.logger)).first
    }

    public func subscription(token: String) async throws -> DigestSubscription? {
        try await Self.subscriptions(database.client.query("""
            SELECT \(unescaped: Self.subscriptionColumns) FROM digest_subscription WHERE token = \(CopyText.withoutNUL(token))
            """, logger: database.logger)).first
    }

    public func save(_ owner: ListOwner, address: String, weekday: Int, hour: Int, years: Int, newToken: String,
                     at now: Date) async throws -> DigestSubscription {
        let logger = database.logger, time = now.timeIntervalSince1970
        let address = CopyText.withoutNUL(address)
        return try await database.client.withTransaction(logger: logger) { connection in
            // Locks the row (when there is one) so two saves decide in turn.
            var kept: String?
            for try await found in try await connection.query("""
                SELECT address FROM digest_subscription WHERE owner = \(owner.id) FOR UPDATE
                """, logger: logger).decode(String.self) { kept = found }
            if let kept, kept.lowercased() == address.lowercased() {
                try await connection.query("""
                    UPDATE digest_subscription SET address = \(address), weekday = \(Int32(weekday)), hour = \(Int32(hour)),
                        years = \(Int32(years)), updated_at = \(time) WHERE owner = \(owner.id)
                    """, logger: logger)
            } else {
                try await connection.query("""
                    INSERT INTO digest_subscription(owner, address, weekday, hour, years, token, confirmed_at, created_at, updated_at)
                    VALUES (\(owner.id), \(address), \(Int32(weekday)), \(Int32(hour)), \(Int32(years)), \(newToken), NULL, \(time), \(time))
                    ON CONFLICT (owner) DO UPDATE SET address = EXCLUDED.address, weekday = EXCLUDED.weekday, hour = EXCLUDED.hour,
                        years = EXCLUDED.years, token = EXCLUDED.token, confirmed_at = NULL, updated_at = EXCLUDED.updated_at
                    """, logger: logger)
                try await Self.skipWaiting(owner, reason: "The address changed before it went out.", connection, logger)
            }
            guard let saved = try await Self.subscriptions(connection.query("""
                SELECT \(unescaped: Self.subscriptionColumns) FROM digest_subscription WHERE owner = \(owner.id)
                """, logger: logger)).first else { throw SourceError.storage(detail: "the digest subscription could not be kept") }
            return saved
        }
    }

    /// Skips `owner`'s waiting emails; their jobs go first (the order
    /// every change of an email locks them in), so a sender that claimed
    /// one meanwhile writes nothing.
    static func skipWaiting(_ owner: ListOwner, reason: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("""
            DELETE FROM job WHERE kind = \(JobKind.digest.rawValue)
              AND key IN (SELECT CAST(id AS TEXT) FROM digest_send WHERE owner = \(owner.id) AND state = 'waiting')
            """, logger: logger)
        try await connection.query("""
            UPDATE digest_send SET state = 'skipped', reason = \(reason) WHERE owner = \(owner.id) AND state = 'waiting'
            """, logger: logger)
    }

    public func confirm(token: String, at now: Date) async throws -> DigestSubscription? {
        let token = CopyText.withoutNUL(token)
        try await database.client.query("""
            UPDATE digest_subscription SET confirmed_at = \(now.timeIntervalSince1970) WHERE token = \(token) AND confirmed_at IS NULL
            """, logger: database.logger)
        return try await subscription(token: token)
    }

    public func remove(_ owner: ListOwner, reason: String, at now: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            let removed = try await PostgresHistoryCopyStore.changed(connection.query(
                "DELETE FROM digest_subscription WHERE owner = \(owner.id) RETURNING 1", logger: logger))
            try await Self.skipWaiting(owner, reason: reason, connection, logger)
            return removed
        }
    }

    public func confirmedSubscriptions() async throws -> [DigestSubscription] {
        try await Self.subscriptions(database.client.query("""
            SELECT \(unescaped: Self.subscriptionColumns) FROM digest_subscription WHERE confirmed_at IS NOT NULL ORDER BY owner
            """, logger: database.logger))
    }

    public func queue(_ owner: ListOwner, kind: DigestSend.Kind, key: String, address: String, due: Date, at now: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            // Nothing is queued for an account erased meanwhile.
            guard let person = try await Self.person(of: owner, connection, logger) else { return false }
            var queued: Int64?
            for try await id in try await connection.query("""
                INSERT INTO digest_send(owner, kind, key, address, state, due_at, queued_at)
                VALUES (\(owner.id), \(kind.rawValue), \(CopyText.withoutNUL(key)), \(CopyText.withoutNUL(address)), 'waiting',
                        \(due.timeIntervalSince1970), \(now.timeIntervalSince1970))
                ON CONFLICT (owner, kind, key) DO NOTHING RETURNING id
                """, logger: logger).decode(Int64.self) { queued = id }
            guard let queued else { return false }
            _ = try await PostgresJobQueue.enqueue(.digest, personKey: person, key: String(queued),
                                                   payload: "", machine: nil, notBefore: due, at: now, connection, logger)
            return true
        }
    }

    public func begin(_ job: JobClaim, at now: Date) async throws -> DigestSend? {
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await PostgresJobQueue.holds(job, connection, logger), let id = Int64(job.job.key) else { return nil }
            return try await Self.sends(connection.query("""
                UPDATE digest_send SET state = 'sending', attempts = attempts + 1 WHERE id = \(id) AND state IN ('waiting', 'sending')
                RETURNING \(unescaped: Self.sendColumns)
                """, logger: logger)).first
        }
    }

    public func end(_ job: JobClaim, as outcome: DigestOutcome, at now: Date) async throws -> Bool {
        let logger = database.logger
        guard let id = Int64(job.job.key) else { return false }
        let due: Double? = if case .retry(let at, _) = outcome { at.timeIntervalSince1970 } else { nil }
        let sentAt: Double? = outcome.state == .sent ? now.timeIntervalSince1970 : nil
        return try await database.client.withTransaction(logger: logger) { connection in
            // The job's row first, locked: an erasure deleting it waits,
            // or has already won and nothing is written.
            guard try await PostgresJobQueue.holds(job, connection, logger) else { return false }
            try await connection.query("""
                UPDATE digest_send SET state = \(outcome.state.rawValue),
                    reason = CASE WHEN \(outcome == .stopped) THEN reason ELSE \(outcome.reason.map(CopyText.withoutNUL)) END,
                    due_at = coalesce(\(due), due_at), sent_at = \(sentAt), attempts = attempts - \(Int32(outcome == .stopped ? 1 : 0))
                WHERE id = \(id) AND state = 'sending'
                """, logger: logger)
            return try await PostgresJobQueue.end(job, as: outcome.ending, at: now, connection, logger)
        }
    }

    public func forget(endedBefore date: Date) async throws -> Int {
        let rows = try await database.client.query("""
            DELETE FROM digest_send WHERE state IN ('sent', 'skipped', 'failed') AND queued_at < \(date.timeIntervalSince1970) RETURNING 1
            """, logger: database.logger)
        var count = 0
        for try await _ in rows.decode(Int32.self) { count += 1 }
        return count
    }

    public func sends(of owner: ListOwner, limit: Int) async throws -> [DigestSend] {
        try await Self.sends(database.client.query("""
            SELECT \(unescaped: Self.sendColumns) FROM digest_send WHERE owner = \(owner.id) ORDER BY id DESC LIMIT \(Int64(limit))
            """, logger: database.logger))
    }
}
