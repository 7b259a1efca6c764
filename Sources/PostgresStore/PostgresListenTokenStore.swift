import Archive
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

    public func replaceToken(of owner: ListOwner, digest: String, at now: Date) async throws {
        try await database.client.query("""
            INSERT INTO listen_token(owner, token_digest, created_at) VALUES (\(owner.id), \(digest), \(now))
            ON CONFLICT (owner) DO UPDATE SET token_digest = EXCLUDED.token_digest, created_at = EXCLUDED.created_at
            """, logger: logger)
    }

    public func holder(ofToken digest: String) async throws -> ListenTokenHolder? {
        let rows = try await database.client.query("""
            SELECT listen_token.owner, account.name FROM listen_token LEFT JOIN account ON account.id = listen_token.owner
            WHERE listen_token.token_digest = \(digest)
            """, logger: logger)
        for try await (owner, name) in rows.decode((Int64, String?).self) {
            return ListenTokenHolder(owner: owner == 0 ? .household : .account(owner), accountName: name.flatMap(Username.init(validating:)))
        }
        return nil
    }

    public func tokenMade(by owner: ListOwner) async throws -> Date? {
        let rows = try await database.client.query("SELECT created_at FROM listen_token WHERE owner = \(owner.id)", logger: logger)
        for try await made in rows.decode(Date.self) { return made }
        return nil
    }
}
