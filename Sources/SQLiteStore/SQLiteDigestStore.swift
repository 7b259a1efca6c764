import Foundation
import GRDB
import Stores
import VinylogueCore

/// `DigestStore` in SQLite (tables `digest_subscription`, `digest_send`;
/// each email's `digest` job in `job`). Every change is one write
/// transaction: an email and its job are queued, and ended, together.
public struct SQLiteDigestStore: DigestStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("digests") { db in
            try db.execute(sql: """
                CREATE TABLE digest_subscription (
                    owner INTEGER PRIMARY KEY,
                    address TEXT NOT NULL,
                    weekday INTEGER NOT NULL,
                    hour INTEGER NOT NULL,
                    years INTEGER NOT NULL,
                    token TEXT NOT NULL UNIQUE,
                    confirmed_at REAL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL);
                CREATE TABLE digest_send (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    key TEXT NOT NULL,
                    address TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    due_at REAL NOT NULL,
                    lease_until REAL,
                    holder TEXT,
                    reason TEXT,
                    queued_at REAL NOT NULL,
                    sent_at REAL,
                    UNIQUE (owner, kind, key));
                CREATE INDEX digest_send_due ON digest_send(state, due_at);
                """)
        }
    }

    /// The emails' claim columns given up to the one job queue: each email
    /// waiting or being sent (by a sender that may have died) becomes a
    /// queued `digest` job, due when the email was; the row keeps what the
    /// email is and what came of it. Registered after the job queue.
    static func registerJobQueueMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("digests in the job queue") { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT id, owner, due_at, queued_at FROM digest_send WHERE state IN ('waiting', 'sending') ORDER BY due_at, id
                """) {
                let id: Int64 = row["id"]
                _ = try SQLiteJobQueue.enqueue(.digest, personKey: try person(of: ListOwner(id: row["owner"]), in: db) ?? "", key: String(id),
                                               payload: "", machine: nil, notBefore: Date(timeIntervalSince1970: row["due_at"]),
                                               at: Date(timeIntervalSince1970: row["queued_at"]), in: db)
            }
            try db.execute(sql: """
                UPDATE digest_send SET state = 'waiting' WHERE state = 'sending';
                ALTER TABLE digest_send DROP COLUMN holder;
                ALTER TABLE digest_send DROP COLUMN lease_until;
                """)
        }
    }

    /// Whose an owner's email jobs are: the account's name key (erasing
    /// the account deletes them), the household's "".
    static func person(of owner: ListOwner, in db: Database) throws -> String? {
        guard owner != .household else { return "" }
        return try String.fetchOne(db, sql: "SELECT name_key FROM account WHERE id = ?", arguments: [owner.id])
    }

    static let subscriptionColumns = "owner, address, weekday, hour, years, token, confirmed_at, updated_at"
    static let sendColumns = "id, owner, kind, key, address, state, attempts, due_at, reason, queued_at, sent_at"

    static func subscription(_ row: Row) -> DigestSubscription {
        DigestSubscription(owner: ListOwner(id: row["owner"]), address: row["address"], weekday: row["weekday"], hour: row["hour"],
                           years: row["years"], token: row["token"], confirmedAt: (row["confirmed_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                           updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    static func send(_ row: Row) -> DigestSend? {
        guard let kind = DigestSend.Kind(rawValue: row["kind"]), let state = DigestSend.State(rawValue: row["state"]) else { return nil }
        return DigestSend(id: row["id"], owner: ListOwner(id: row["owner"]), kind: kind, key: row["key"], address: row["address"], state: state,
                          attempts: row["attempts"], dueAt: Date(timeIntervalSince1970: row["due_at"]), reason: row["reason"],
                          queuedAt: Date(timeIntervalSince1970: row["queued_at"]),
                          sentAt: (row["sent_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    public func subscription(of owner: ListOwner) async throws -> DigestSubscription? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.subscriptionColumns) FROM digest_subscription WHERE owner = ?", arguments: [owner.id])
                .map(Self.subscription)
        }
    }

    public func subscription(token: String) async throws -> DigestSubscription? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.subscriptionColumns) FROM digest_subscription WHERE token = ?", arguments: [token])
                .map(Self.subscription)
        }
    }

    public func save(_ owner: ListOwner, address: String, weekday: Int, hour: Int, years: Int, newToken: String,
                     at now: Date) async throws -> DigestSubscription {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            let kept = try Row.fetchOne(db, sql: "SELECT address FROM digest_subscription WHERE owner = ?", arguments: [owner.id])
            if let kept, (kept["address"] as String).lowercased() == address.lowercased() {
                try db.execute(sql: """
                    UPDATE digest_subscription SET address = ?, weekday = ?, hour = ?, years = ?, updated_at = ? WHERE owner = ?
                    """, arguments: [address, weekday, hour, years, time, owner.id])
            } else {
                try db.execute(sql: """
                    INSERT INTO digest_subscription(owner, address, weekday, hour, years, token, confirmed_at, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)
                    ON CONFLICT(owner) DO UPDATE SET address = excluded.address, weekday = excluded.weekday, hour = excluded.hour,
                        years = excluded.years, token = excluded.token, confirmed_at = NULL, updated_at = excluded.updated_at
                    """, arguments: [owner.id, address, weekday, hour, years, newToken, time, time])
                try Self.skipWaiting(owner, reason: "The address changed before it went out.", db)
            }
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.subscriptionColumns) FROM digest_subscription WHERE owner = ?",
                                             arguments: [owner.id]) else {
                throw SourceError.storage(detail: "the digest subscription could not be kept")
            }
            return Self.subscription(row)
        }
    }

    /// Skips `owner`'s waiting emails; their jobs go first, so a sender
    /// that claimed one meanwhile writes nothing.
    static func skipWaiting(_ owner: ListOwner, reason: String, _ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM job WHERE kind = ? AND key IN (SELECT CAST(id AS TEXT) FROM digest_send WHERE owner = ? AND state = 'waiting')
            """, arguments: [JobKind.digest.rawValue, owner.id])
        try db.execute(sql: "UPDATE digest_send SET state = 'skipped', reason = ? WHERE owner = ? AND state = 'waiting'",
                       arguments: [reason, owner.id])
    }

    public func confirm(token: String, at now: Date) async throws -> DigestSubscription? {
        try await writer.write { db in
            try db.execute(sql: "UPDATE digest_subscription SET confirmed_at = ? WHERE token = ? AND confirmed_at IS NULL",
                           arguments: [now.timeIntervalSince1970, token])
            return try Row.fetchOne(db, sql: "SELECT \(Self.subscriptionColumns) FROM digest_subscription WHERE token = ?", arguments: [token])
                .map(Self.subscription)
        }
    }

    public func remove(_ owner: ListOwner, reason: String, at now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM digest_subscription WHERE owner = ?", arguments: [owner.id])
            let removed = db.changesCount > 0
            try Self.skipWaiting(owner, reason: reason, db)
            return removed
        }
    }

    public func confirmedSubscriptions() async throws -> [DigestSubscription] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.subscriptionColumns) FROM digest_subscription WHERE confirmed_at IS NOT NULL ORDER BY owner")
                .map(Self.subscription)
        }
    }

    public func queue(_ owner: ListOwner, kind: DigestSend.Kind, key: String, address: String, due: Date, at now: Date) async throws -> Bool {
        try await writer.write { db in
            // Nothing is queued for an account erased meanwhile.
            guard let person = try Self.person(of: owner, in: db) else { return false }
            try db.execute(sql: """
                INSERT INTO digest_send(owner, kind, key, address, state, due_at, queued_at) VALUES (?, ?, ?, ?, 'waiting', ?, ?)
                ON CONFLICT(owner, kind, key) DO NOTHING
                """, arguments: [owner.id, kind.rawValue, key, address, due.timeIntervalSince1970, now.timeIntervalSince1970])
            guard db.changesCount == 1 else { return false }
            _ = try SQLiteJobQueue.enqueue(.digest, personKey: person, key: String(db.lastInsertedRowID), payload: "",
                                           machine: nil, notBefore: due, at: now, in: db)
            return true
        }
    }

    public func begin(_ job: JobClaim, at now: Date) async throws -> DigestSend? {
        try await writer.write { db in
            guard try SQLiteJobQueue.holds(job, in: db), let id = Int64(job.job.key) else { return nil }
            try db.execute(sql: "UPDATE digest_send SET state = 'sending', attempts = attempts + 1 WHERE id = ? AND state IN ('waiting', 'sending')",
                           arguments: [id])
            guard db.changesCount == 1 else { return nil }
            return try Row.fetchOne(db, sql: "SELECT \(Self.sendColumns) FROM digest_send WHERE id = ?", arguments: [id]).flatMap(Self.send)
        }
    }

    public func end(_ job: JobClaim, as outcome: DigestOutcome, at now: Date) async throws -> Bool {
        try await writer.write { db in
            guard try SQLiteJobQueue.holds(job, in: db) else { return false }
            let due: Double? = if case .retry(let at, _) = outcome { at.timeIntervalSince1970 } else { nil }
            try db.execute(sql: """
                UPDATE digest_send SET state = ?, reason = CASE WHEN ? THEN reason ELSE ? END, due_at = coalesce(?, due_at),
                    sent_at = ?, attempts = attempts - ?
                WHERE id = ? AND state = 'sending'
                """, arguments: [outcome.state.rawValue, outcome == .stopped, outcome.reason, due,
                                 outcome.state == .sent ? now.timeIntervalSince1970 : nil, outcome == .stopped ? 1 : 0, Int64(job.job.key)])
            return try SQLiteJobQueue.end(job, as: outcome.ending, at: now, in: db)
        }
    }

    public func forget(endedBefore date: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM digest_send WHERE state IN ('sent', 'skipped', 'failed') AND queued_at < ?",
                           arguments: [date.timeIntervalSince1970])
            return db.changesCount
        }
    }

    public func sends(of owner: ListOwner, limit: Int) async throws -> [DigestSend] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.sendColumns) FROM digest_send WHERE owner = ? ORDER BY id DESC LIMIT ?",
                             arguments: [owner.id, limit]).compactMap(Self.send)
        }
    }
}
