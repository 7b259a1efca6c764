import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `MobileSessionStore` in PostgreSQL: a session made on one instance works
/// on every instance, and a new token stops its old sessions on all of them.
public struct PostgresMobileSessionStore: MobileSessionStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    public func startSession(digest: String, owner: ListOwner, tokenDigest: String, at now: Date) async throws {
        try await database.client.query("""
            WITH dropped AS (DELETE FROM mobile_session WHERE owner = \(owner.id) AND token_digest <> \(tokenDigest))
            INSERT INTO mobile_session(owner, session_digest, token_digest, created_at) VALUES (\(owner.id), \(digest), \(tokenDigest), \(now))
            """, logger: logger)
    }

    public func holder(ofSession digest: String) async throws -> ListenTokenHolder? {
        let rows = try await database.client.query("""
            SELECT mobile_session.owner, account.name FROM mobile_session
            JOIN listen_token ON listen_token.owner = mobile_session.owner AND listen_token.token_digest = mobile_session.token_digest
            LEFT JOIN account ON account.id = mobile_session.owner
            WHERE mobile_session.session_digest = \(digest)
            """, logger: logger)
        for try await (owner, name) in rows.decode((Int64, String?).self) {
            return ListenTokenHolder(ownerID: owner, accountName: name)
        }
        return nil
    }

    public func sessionCount(of owner: ListOwner) async throws -> Int {
        let rows = try await database.client.query("SELECT count(*) FROM mobile_session WHERE owner = \(owner.id)", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
