import Foundation
import GRDB
import VinylogueCore

/// Whose listen-submission token a digest is: the owner it was made for,
/// and, for an account, its name (the archive user its listens go to).
public struct ListenTokenHolder: Sendable, Hashable {
    public let owner: ListOwner
    /// The account's Last.fm name; nil for the household.
    public let accountName: Username?

    public init(owner: ListOwner, accountName: Username?) {
        self.owner = owner
        self.accountName = accountName
    }

    /// From a stored owner id (0: the household) and account name.
    public init(ownerID: Int64, accountName: String?) {
        self.init(owner: ownerID == 0 ? .household : .account(ownerID), accountName: accountName.flatMap(Username.init(validating:)))
    }

    /// From a row with `owner` and `name` columns.
    init(row: Row) {
        self.init(ownerID: row["owner"], accountName: row["name"])
    }
}

/// Listen-submission tokens (the ListenBrainz-compatible `/1/` API's
/// `Authorization: Token …`): at most one per owner, the household's or an
/// account's. `SQLiteListenTokenStore` and `PostgresListenTokenStore` play it.
///
/// Only the SHA-256 digest of a token is stored, never the token: a copy of
/// the database cannot be used to submit listens. Beside it, the token's
/// sealed `auth.getMobileSession` verifier (see `MobileSessionStore`): what
/// the Last.fm-compatible API needs to check a player's `authToken`,
/// encrypted with a key that is not in the database.
public protocol ListenTokenStore: Sendable {
    /// Makes `digest` `owner`'s token, with its sealed mobile sign-in
    /// verifier, replacing the one it had in the same statement, so the old
    /// token (and every session made with it) stops working at once.
    func replaceToken(of owner: ListOwner, digest: String, mobileVerifier: String?, at now: Date) async throws
    /// Who holds the token with `digest`; nil when nobody does.
    func holder(ofToken digest: String) async throws -> ListenTokenHolder?
    /// When `owner`'s token was made; nil when it has none.
    func tokenMade(by owner: ListOwner) async throws -> Date?
    /// The token `owner` holds now, for a mobile sign-in: its digest and
    /// its sealed verifier; nil when it has none.
    func mobileVerifier(of owner: ListOwner) async throws -> MobileVerifier?
    /// The token of the account named `name` (in any case), for a mobile
    /// sign-in; nil when there is no such account or it has no token.
    func mobileVerifier(ofAccountNamed name: Username) async throws -> MobileVerifier?
}

extension ListenTokenStore {
    /// A token without a mobile sign-in verifier (its owner signs players
    /// in only with the token itself as `password`).
    public func replaceToken(of owner: ListOwner, digest: String, at now: Date) async throws {
        try await replaceToken(of: owner, digest: digest, mobileVerifier: nil, at: now)
    }
}

/// A listen token as `auth.getMobileSession` needs it: whose it is, its
/// digest (a session is tied to it), and its sealed verifier.
public struct MobileVerifier: Sendable, Hashable {
    public let holder: ListenTokenHolder
    public let tokenDigest: String
    /// Sealed by the server (`MobileSignIn`); nil for a token made before
    /// mobile sign-in existed.
    public let sealed: String?

    public init(holder: ListenTokenHolder, tokenDigest: String, sealed: String?) {
        self.holder = holder
        self.tokenDigest = tokenDigest
        self.sealed = sealed
    }
}

/// `ListenTokenStore` in SQLite (table `listen_token`, keyed by owner).
public struct SQLiteListenTokenStore: ListenTokenStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listen-tokens") { db in
            try db.create(table: "listen_token") { t in
                t.primaryKey("owner", .integer)
                t.column("token_digest", .text).notNull().unique()
                t.column("created_at", .double).notNull()
            }
        }
        migrator.registerMigration("listen-token-mobile-verifier") { db in
            try db.alter(table: "listen_token") { t in t.add(column: "mobile_verifier", .text) }
        }
    }

    public func replaceToken(of owner: ListOwner, digest: String, mobileVerifier: String?, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO listen_token(owner, token_digest, created_at, mobile_verifier) VALUES (?, ?, ?, ?)",
                           arguments: [owner.id, digest, now.timeIntervalSince1970, mobileVerifier])
            // Sessions made with the old token no longer match it; drop them.
            try db.execute(sql: "DELETE FROM mobile_session WHERE owner = ? AND token_digest <> ?", arguments: [owner.id, digest])
        }
    }

    public func mobileVerifier(of owner: ListOwner) async throws -> MobileVerifier? {
        try await verifier(where: "listen_token.owner = ?", [owner.id])
    }

    public func mobileVerifier(ofAccountNamed name: Username) async throws -> MobileVerifier? {
        try await verifier(where: "account.name_key = ?", [name.key])
    }

    private func verifier(where condition: String, _ arguments: StatementArguments) async throws -> MobileVerifier? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT listen_token.owner, account.name, listen_token.token_digest, listen_token.mobile_verifier
                FROM listen_token LEFT JOIN account ON account.id = listen_token.owner
                WHERE \(condition)
                """, arguments: arguments) else { return nil }
            return MobileVerifier(holder: ListenTokenHolder(row: row), tokenDigest: row["token_digest"], sealed: row["mobile_verifier"])
        }
    }

    public func holder(ofToken digest: String) async throws -> ListenTokenHolder? {
        try await writer.read { db in try Self.holder(ofToken: digest, in: db) }
    }

    /// Who holds the token with `digest`, read in the caller's transaction.
    static func holder(ofToken digest: String, in db: Database) throws -> ListenTokenHolder? {
        // Asked on every listen received: a statement kept compiled.
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT listen_token.owner, account.name FROM listen_token LEFT JOIN account ON account.id = listen_token.owner
            WHERE listen_token.token_digest = ?
            """), arguments: [digest]) else { return nil }
        return ListenTokenHolder(row: row)
    }

    public func tokenMade(by owner: ListOwner) async throws -> Date? {
        try await writer.read { db in
            try Double.fetchOne(db, sql: "SELECT created_at FROM listen_token WHERE owner = ?", arguments: [owner.id])
                .map(Date.init(timeIntervalSince1970:))
        }
    }
}
