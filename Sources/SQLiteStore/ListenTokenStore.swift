import Foundation
import Stores
import GRDB
import VinylogueCore

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

extension ListenTokenHolder {
    /// From a row with `owner` and `name` columns.
    init(row: Row) {
        self.init(ownerID: row["owner"], accountName: row["name"])
    }
}
