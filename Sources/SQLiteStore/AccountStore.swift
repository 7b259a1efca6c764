import Foundation
import Stores
import GRDB
import VinylogueCore

/// `AccountStore` in SQLite.
///
/// A browser holds only a random session token in a cookie; the database
/// keeps its SHA-256 digest (`tokenDigest`), so a copy of the database
/// cannot be replayed as a cookie. Last.fm's own session key for the
/// account (for scrobbling on the person's behalf later) is stored here and
/// never leaves the server.
public struct SQLiteAccountStore: AccountStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("accounts-and-sessions") { db in
            try db.create(table: "account") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name_key", .text).notNull().unique()
                t.column("name", .text).notNull()
                t.column("lastfm_session_key", .text).notNull()
                t.column("created_at", .double).notNull()
                t.column("signed_in_at", .double).notNull()
            }
            try db.create(table: "web_session") { t in
                t.primaryKey("token_digest", .text)
                t.column("account_id", .integer).notNull().indexed()
                    .references("account", onDelete: .cascade)
                t.column("created_at", .double).notNull()
                t.column("expires_at", .double).notNull().indexed()
            }
        }
    }

    /// Each account's choice of who may see its listening (`Visibility`).
    static func registerVisibilityMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("account-visibility") { db in
            try db.execute(sql: "ALTER TABLE account ADD COLUMN visibility TEXT NOT NULL DEFAULT 'everyone'")
        }
    }

    /// Records a completed Last.fm sign-in for `name`: creates the account
    /// on the first one, else updates its spelling and Last.fm session key.
    /// Returns the account and whether it is new.
    public func signedIn(_ name: Username, lastFMSessionKey: String, at now: Date) async throws -> (account: Account, isNew: Bool) {
        try await writer.write { db in
            let time = now.timeIntervalSince1970
            if let id = try Int64.fetchOne(db, sql: "SELECT id FROM account WHERE name_key = ?", arguments: [name.key]) {
                try db.execute(sql: "UPDATE account SET name = ?, lastfm_session_key = ?, signed_in_at = ? WHERE id = ?",
                               arguments: [name.value, lastFMSessionKey, time, id])
                return (Account(id: id, name: name), false)
            }
            try db.execute(sql: "INSERT INTO account(name_key, name, lastfm_session_key, created_at, signed_in_at) VALUES (?, ?, ?, ?, ?)",
                           arguments: [name.key, name.value, lastFMSessionKey, time, time])
            return (Account(id: db.lastInsertedRowID, name: name), true)
        }
    }

    /// Starts a session for `account`, valid until `expires`; `replacing`
    /// (the digest of the session the browser held before, if any) ends in
    /// the same transaction, so signing in always rotates the session.
    public func startSession(digest: String, for account: Account, at now: Date, expires: Date, replacing old: String?) async throws {
        try await writer.write { db in
            if let old { try db.execute(sql: "DELETE FROM web_session WHERE token_digest = ?", arguments: [old]) }
            // Expired sessions go whenever a new one starts: the table holds
            // only live ones plus at most a day's worth of stragglers.
            try db.execute(sql: "DELETE FROM web_session WHERE expires_at <= ?", arguments: [now.timeIntervalSince1970])
            try db.execute(sql: "INSERT INTO web_session(token_digest, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                           arguments: [digest, account.id, now.timeIntervalSince1970, expires.timeIntervalSince1970])
        }
    }

    /// The account whose live session has `digest`; nil when there is none
    /// or it has expired.
    public func account(forSession digest: String, at now: Date) async throws -> Account? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT account.id, account.name FROM web_session JOIN account ON account.id = web_session.account_id
                WHERE web_session.token_digest = ? AND web_session.expires_at > ?
                """, arguments: [digest, now.timeIntervalSince1970]),
                let name = Username(validating: row["name"]) else { return nil }
            return Account(id: row["id"], name: name)
        }
    }

    /// Ends the session with `digest` (signing out).
    public func endSession(digest: String) async throws {
        try await writer.write { db in try db.execute(sql: "DELETE FROM web_session WHERE token_digest = ?", arguments: [digest]) }
    }

    /// How many sessions are stored (live or not yet cleared), for tests and
    /// the operator.
    public func sessionCount() async throws -> Int {
        try await writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM web_session") ?? 0 }
    }

    /// How many accounts exist.
    public func accountCount() async throws -> Int {
        try await writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0 }
    }

    public func account(named name: Username) async throws -> Account? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, name FROM account WHERE name_key = ?", arguments: [name.key]),
                  let spelled = Username(validating: row["name"]) else { return nil }
            return Account(id: row["id"], name: spelled)
        }
    }

    public func account(id: Int64) async throws -> Account? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, name FROM account WHERE id = ?", arguments: [id]),
                  let spelled = Username(validating: row["name"]) else { return nil }
            return Account(id: row["id"], name: spelled)
        }
    }

    // MARK: Visibility

    public func visibility(of account: Account) async throws -> Visibility {
        try await writer.read { db in
            let raw = try String.fetchOne(db, sql: "SELECT visibility FROM account WHERE id = ?", arguments: [account.id])
            return raw.map { Visibility(rawValue: $0) ?? .onlyMe } ?? .everyone
        }
    }

    public func setVisibility(_ visibility: Visibility, of account: Account) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE account SET visibility = ? WHERE id = ?", arguments: [visibility.rawValue, account.id])
        }
    }

    public func restrictions() async throws -> [Restriction] {
        try await writer.read { db in
            Restriction.folding(try Row.fetchAll(db, sql: Restriction.query).map { (id: $0[0], name: $0[1], visibility: $0[2], friend: $0[3]) })
        }
    }
}
