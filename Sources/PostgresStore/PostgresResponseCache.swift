import Crypto
import Foundation
import LastFM
import Logging
import PostgresNIO
import VinylogueCore

/// Last.fm's answers kept in PostgreSQL, shared by every instance on the
/// database: a past week's chart fetched by one is found by all, for good.
///
/// `exclusively` makes one instance the fetcher of a request: it holds a
/// transaction-scoped advisory lock on the request's key while it checks
/// the cache, fetches and stores; an instance asking for the same request
/// meanwhile waits on that lock (inside PostgreSQL, no polling) and then
/// finds the answer stored. The locks use a small pool of their own, so
/// waiting fetches never hold up the rest of the app's queries.
public struct PostgresResponseCache: LastFMResponseCache {
    let database: PostgresDatabase
    let coordination: PostgresDatabase
    let clock: WallClock

    /// `coordination` is a second pool on the same database for the
    /// fetchers' locks.
    public init(_ database: PostgresDatabase, coordination: PostgresDatabase, clock: WallClock) {
        self.database = database
        self.coordination = coordination
        self.clock = clock
    }

    var logger: Logger { database.logger }

    public func lookup(_ key: String) async -> CachedResponse? {
        do {
            let rows = try await database.client.query(
                "SELECT body, expires_at FROM lastfm_response WHERE key = \(key)", logger: logger)
            for try await (body, expires) in rows.decode((ByteBuffer, Date).self) {
                return CachedResponse(body: Data(body.readableBytesView), expires: expires)
            }
        } catch {
            logger.warning("could not read a saved Last.fm answer: \(String(reflecting: error).prefix(200))")
        }
        return nil
    }

    public func store(_ body: Data, for key: String, expires: Date) async {
        // `distantFuture` is stored as a large finite instant.
        let expiry = min(expires, Date(timeIntervalSince1970: 1e11))
        let now = clock.now
        do {
            try await database.client.query("""
                INSERT INTO lastfm_response(key, body, stored_at, expires_at) VALUES (\(key), \(ByteBuffer(bytes: body)), \(now), \(expiry))
                ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at
                """, logger: logger)
        } catch {
            logger.warning("could not save a Last.fm answer: \(String(reflecting: error).prefix(200))")
        }
    }

    public func exclusively<T: Sendable>(_ key: String, _ work: @Sendable () async throws -> T) async throws -> T {
        let lock = Self.lockKey(key), logger = self.logger
        // The work's own failure (Last.fm's "user not found", say) comes back
        // as it was: `withTransaction` would wrap it in a transaction error,
        // which the client could only call a network failure.
        let outcome: Result<T, any Error> = try await coordination.client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
            do { return .success(try await work()) } catch { return .failure(error) }
        }
        return try outcome.get()
    }

    /// A stable 64-bit advisory-lock key for a cache key (the first 8 bytes
    /// of its SHA-256), the same in every process.
    public static func lockKey(_ key: String) -> Int64 {
        let digest = Array(SHA256.hash(data: Data(key.utf8)))
        return digest.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}
