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
}

/// Listen-submission tokens (the ListenBrainz-compatible `/1/` API's
/// `Authorization: Token …`): at most one per owner, the household's or an
/// account's. `SQLiteListenTokenStore` and `PostgresListenTokenStore` play it.
///
/// Only the SHA-256 digest of a token is stored, never the token: a copy of
/// the database cannot be used to submit listens.
public protocol ListenTokenStore: Sendable {
    /// Makes `digest` `owner`'s token, replacing the one it had in the same
    /// statement, so the old token stops working at once.
    func replaceToken(of owner: ListOwner, digest: String, at now: Date) async throws
    /// Who holds the token with `digest`; nil when nobody does.
    func holder(ofToken digest: String) async throws -> ListenTokenHolder?
    /// When `owner`'s token was made; nil when it has none.
    func tokenMade(by owner: ListOwner) async throws -> Date?
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
    }

    public func replaceToken(of owner: ListOwner, digest: String, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO listen_token(owner, token_digest, created_at) VALUES (?, ?, ?)",
                           arguments: [owner.id, digest, now.timeIntervalSince1970])
        }
    }

    public func holder(ofToken digest: String) async throws -> ListenTokenHolder? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT listen_token.owner, account.name FROM listen_token LEFT JOIN account ON account.id = listen_token.owner
                WHERE listen_token.token_digest = ?
                """, arguments: [digest]) else { return nil }
            let owner: Int64 = row["owner"]
            let name: String? = row["name"]
            return ListenTokenHolder(owner: owner == 0 ? .household : .account(owner), accountName: name.flatMap(Username.init(validating:)))
        }
    }

    public func tokenMade(by owner: ListOwner) async throws -> Date? {
        try await writer.read { db in
            try Double.fetchOne(db, sql: "SELECT created_at FROM listen_token WHERE owner = ?", arguments: [owner.id])
                .map(Date.init(timeIntervalSince1970:))
        }
    }
}
