import Foundation
import Stores
import GRDB

/// Stored answers from Last.fm, keyed by request, each with its expiry.
///
/// Only successful answers are ever written (the client decides); a row past
/// its expiry is still returned, so a caller can show stale data when
/// Last.fm is down, and says how old it is.
public struct ResponseCacheTable: Sendable {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v1-response-cache") { db in
            try db.create(table: "response_cache") { t in
                t.primaryKey("key", .text)
                t.column("body", .blob).notNull()
                t.column("storedAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
            }
        }
    }

    /// One stored answer.
    public struct Entry: Sendable {
        public let body: Data
        public let storedAt: Date
        public let expiresAt: Date
    }

    public func entry(for key: String) async -> Entry? {
        try? await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT body, storedAt, expiresAt FROM response_cache WHERE key = ?", arguments: [key]).map {
                Entry(body: $0["body"], storedAt: Date(timeIntervalSince1970: $0["storedAt"]),
                      expiresAt: Date(timeIntervalSince1970: $0["expiresAt"]))
            }
        }
    }

    public func store(_ body: Data, for key: String, at now: Date, expires: Date) async {
        // `distantFuture` is stored as a large finite number.
        let expiry = min(expires.timeIntervalSince1970, 1e12)
        _ = try? await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO response_cache(key, body, storedAt, expiresAt) VALUES (?, ?, ?, ?)",
                           arguments: [key, body, now.timeIntervalSince1970, expiry])
        }
    }
}
