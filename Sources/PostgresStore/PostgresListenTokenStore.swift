import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `ListenTokenStore` in PostgreSQL: a token made on one instance works on
/// every instance on the database, and a replaced one stops on all of them.
public struct PostgresListenTokenStore: ListenTokenStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    public func replaceToken(of owner: ListOwner, digest: String, mobileVerifier: String?, at now: Date) async throws {
        // One statement: the new token, its verifier, and the old token's sessions gone.
        try await database.client.query("""
            WITH replaced AS (
                INSERT INTO listen_token(owner, token_digest, created_at, mobile_verifier) VALUES (\(owner.id), \(digest), \(now), \(mobileVerifier))
                ON CONFLICT (owner) DO UPDATE SET token_digest = EXCLUDED.token_digest, created_at = EXCLUDED.created_at,
                    mobile_verifier = EXCLUDED.mobile_verifier
                RETURNING owner)
            DELETE FROM mobile_session WHERE owner IN (SELECT owner FROM replaced) AND token_digest <> \(digest)
            """, logger: logger)
    }

    public func holder(ofToken digest: String) async throws -> ListenTokenHolder? {
        let logger = self.logger
        return try await database.client.withConnection { connection in try await Self.holder(ofToken: digest, connection, logger) }
    }

    /// The holder of the token with `digest`, read on `connection` (in the
    /// caller's transaction, when it has one).
    static func holder(ofToken digest: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> ListenTokenHolder? {
        try await holders(ofTokens: [digest], connection, logger)[digest]
    }

    /// The holders of the tokens with these digests (those that have one):
    /// one query.
    static func holders(ofTokens digests: Set<String>, _ connection: PostgresConnection,
                        _ logger: Logger) async throws -> [String: ListenTokenHolder] {
        var holders: [String: ListenTokenHolder] = [:]
        guard !digests.isEmpty else { return holders }
        let rows = try await connection.query("""
            SELECT listen_token.token_digest, listen_token.owner, account.name
            FROM listen_token LEFT JOIN account ON account.id = listen_token.owner
            WHERE listen_token.token_digest = ANY(\(Array(digests)))
            """, logger: logger)
        for try await (digest, owner, name) in rows.decode((String, Int64, String?).self) {
            holders[digest] = ListenTokenHolder(ownerID: owner, accountName: name)
        }
        return holders
    }

    public func mobileVerifier(of owner: ListOwner) async throws -> MobileVerifier? {
        try await verifier(try await database.client.query("""
            SELECT listen_token.owner, account.name, listen_token.token_digest, listen_token.mobile_verifier
            FROM listen_token LEFT JOIN account ON account.id = listen_token.owner WHERE listen_token.owner = \(owner.id)
            """, logger: logger))
    }

    public func mobileVerifier(ofAccountNamed name: Username) async throws -> MobileVerifier? {
        try await verifier(try await database.client.query("""
            SELECT listen_token.owner, account.name, listen_token.token_digest, listen_token.mobile_verifier
            FROM listen_token JOIN account ON account.id = listen_token.owner WHERE account.name_key = \(name.key)
            """, logger: logger))
    }

    private func verifier(_ rows: PostgresRowSequence) async throws -> MobileVerifier? {
        for try await (owner, name, digest, sealed) in rows.decode((Int64, String?, String, String?).self) {
            return MobileVerifier(holder: ListenTokenHolder(ownerID: owner, accountName: name), tokenDigest: digest, sealed: sealed)
        }
        return nil
    }

    public func tokenMade(by owner: ListOwner) async throws -> Date? {
        let rows = try await database.client.query("SELECT created_at FROM listen_token WHERE owner = \(owner.id)", logger: logger)
        for try await made in rows.decode(Date.self) { return made }
        return nil
    }
}
