import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `AccountStore` in PostgreSQL: every instance on the database sees the
/// same accounts and sessions, so a session started on one works on all.
public struct PostgresAccountStore: AccountStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    public func signedIn(_ name: Username, lastFMSessionKey: String, at now: Date) async throws -> (account: Account, isNew: Bool) {
        let rows = try await database.client.query("""
            INSERT INTO account(name_key, name, lastfm_session_key, created_at, signed_in_at)
            VALUES (\(name.key), \(name.value), \(lastFMSessionKey), \(now), \(now))
            ON CONFLICT (name_key) DO UPDATE
                SET name = EXCLUDED.name, lastfm_session_key = EXCLUDED.lastfm_session_key, signed_in_at = EXCLUDED.signed_in_at
            RETURNING id, (xmax = 0)
            """, logger: logger)
        for try await (id, inserted) in rows.decode((Int64, Bool).self) {
            return (Account(id: id, name: name), inserted)
        }
        throw PostgresStoreProblem("the account for \(name) was neither created nor found")
    }

    public func startSession(digest: String, for account: Account, at now: Date, expires: Date, replacing old: String?) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            if let old { try await connection.query("DELETE FROM web_session WHERE token_digest = \(old)", logger: logger) }
            try await connection.query("DELETE FROM web_session WHERE expires_at <= \(now)", logger: logger)
            try await connection.query("""
                INSERT INTO web_session(token_digest, account_id, created_at, expires_at) VALUES (\(digest), \(account.id), \(now), \(expires))
                """, logger: logger)
        }
    }

    public func account(forSession digest: String, at now: Date) async throws -> Account? {
        let rows = try await database.client.query("""
            SELECT account.id, account.name FROM web_session JOIN account ON account.id = web_session.account_id
            WHERE web_session.token_digest = \(digest) AND web_session.expires_at > \(now)
            """, logger: logger)
        for try await (id, name) in rows.decode((Int64, String).self) {
            guard let username = Username(validating: name) else { return nil }
            return Account(id: id, name: username)
        }
        return nil
    }

    public func endSession(digest: String) async throws {
        try await database.client.query("DELETE FROM web_session WHERE token_digest = \(digest)", logger: logger)
    }

    public func sessionCount() async throws -> Int { try await count("web_session") }

    public func accountCount() async throws -> Int { try await count("account") }

    public func account(named name: Username) async throws -> Account? {
        let rows = try await database.client.query("SELECT id, name FROM account WHERE name_key = \(name.key)", logger: logger)
        for try await (id, spelled) in rows.decode((Int64, String).self) {
            return Username(validating: spelled).map { Account(id: id, name: $0) }
        }
        return nil
    }

    public func account(id: Int64) async throws -> Account? {
        let rows = try await database.client.query("SELECT id, name FROM account WHERE id = \(id)", logger: logger)
        for try await (id, spelled) in rows.decode((Int64, String).self) {
            return Username(validating: spelled).map { Account(id: id, name: $0) }
        }
        return nil
    }

    // MARK: Visibility

    public func visibility(of account: Account) async throws -> Visibility {
        let rows = try await database.client.query("SELECT visibility FROM account WHERE id = \(account.id)", logger: logger)
        for try await raw in rows.decode(String.self) { return Visibility(rawValue: raw) ?? .onlyMe }
        return .everyone
    }

    public func setVisibility(_ visibility: Visibility, of account: Account) async throws {
        try await database.client.query("UPDATE account SET visibility = \(visibility.rawValue) WHERE id = \(account.id)", logger: logger)
    }

    public func restrictions() async throws -> [Restriction] {
        let rows = try await database.client.query(PostgresQuery(unsafeSQL: Restriction.query), logger: logger)
        var all: [(id: Int64, name: String, visibility: String, friend: Int64?)] = []
        for try await (id, name, visibility, friend) in rows.decode((Int64, String, String, Int64?).self) {
            all.append((id, name, visibility, friend))
        }
        return Restriction.folding(all)
    }

    private func count(_ table: String) async throws -> Int {
        let rows = try await database.client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger)
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return 0
    }
}

/// Something the database answered that a store cannot make sense of.
struct PostgresStoreProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
