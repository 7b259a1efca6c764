import Foundation
import Stores
import GRDB
import VinylogueCore

/// `MobileSessionStore` in SQLite (table `mobile_session`, keyed by the
/// session key's digest).
public struct SQLiteMobileSessionStore: MobileSessionStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("mobile-sessions") { db in
            try db.create(table: "mobile_session") { t in
                t.primaryKey("session_digest", .text)
                t.column("owner", .integer).notNull().indexed()
                t.column("token_digest", .text).notNull()
                t.column("created_at", .double).notNull()
            }
        }
    }

    public func startSession(digest: String, owner: ListOwner, tokenDigest: String, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM mobile_session WHERE owner = ? AND token_digest <> ?", arguments: [owner.id, tokenDigest])
            try db.execute(sql: "INSERT INTO mobile_session(session_digest, owner, token_digest, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [digest, owner.id, tokenDigest, now.timeIntervalSince1970])
        }
    }

    public func holder(ofSession digest: String) async throws -> ListenTokenHolder? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: """
                SELECT mobile_session.owner, account.name FROM mobile_session
                JOIN listen_token ON listen_token.owner = mobile_session.owner AND listen_token.token_digest = mobile_session.token_digest
                LEFT JOIN account ON account.id = mobile_session.owner
                WHERE mobile_session.session_digest = ?
                """, arguments: [digest]).map(ListenTokenHolder.init(row:))
        }
    }

    public func sessionCount(of owner: ListOwner) async throws -> Int {
        try await writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM mobile_session WHERE owner = ?", arguments: [owner.id]) ?? 0
        }
    }
}
