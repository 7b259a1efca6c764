import Foundation
import LastFM
import Logging
import PostgresNIO

/// Requests to Last.fm paced for a whole fleet: every instance on the
/// database draws from the same `limit` permits (rows of `lastfm_permit`),
/// each held from a request's start until `window` after its answer, as
/// `RateLimit` does within one process. So any `limit + 1` requests of the
/// fleet reach Last.fm at least `window` apart, whichever instances sent them.
///
/// Times are the database's (`clock_timestamp()`), so instances' clocks
/// need not agree. A permit taken by an instance that dies returns after
/// `lease` (20 s: longer than one request to Last.fm may take). Every
/// instance must be configured with the same rate.
public struct PostgresRequestPermits: LastFMRequestPermits {
    let database: PostgresDatabase
    let limit: Int
    let window: Duration
    let lease: Duration

    public init(_ database: PostgresDatabase, limit: Int, window: Duration = .seconds(1), lease: Duration = .seconds(20)) {
        self.database = database
        self.limit = max(1, limit)
        self.window = window
        self.lease = lease
    }

    var logger: Logger { database.logger }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Makes the permit rows match `limit` (at start).
    public func prepare() async throws {
        let logger = self.logger, limit = self.limit
        try await database.client.withTransaction(logger: logger) { connection in
            try await connection.query("""
                INSERT INTO lastfm_permit(slot) SELECT generate_series(0, \(limit - 1)) ON CONFLICT (slot) DO NOTHING
                """, logger: logger)
            try await connection.query("DELETE FROM lastfm_permit WHERE slot >= \(limit)", logger: logger)
        }
    }

    public func acquire() async throws -> Int {
        let leaseSeconds = Self.seconds(lease), windowSeconds = Self.seconds(window)
        while true {
            try Task.checkCancellation()
            let taken = try await database.client.query("""
                WITH free AS (
                    SELECT slot FROM lastfm_permit WHERE available_at <= clock_timestamp()
                    ORDER BY available_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                UPDATE lastfm_permit p SET held = true, available_at = clock_timestamp() + make_interval(secs => \(leaseSeconds))
                FROM free WHERE p.slot = free.slot RETURNING p.slot
                """, logger: logger)
            for try await slot in taken.decode(Int32.self) { return Int(slot) }
            // None free: sleep until the first released one comes back, or
            // a window when every one is still held. A row another instance
            // is taking this moment can still read as free ('-infinity',
            // never used): a moment's wait, not an infinite one (subtracting
            // it failed with "cannot subtract infinite timestamps").
            var wait = windowSeconds
            let next = try await database.client.query("""
                SELECT EXTRACT(EPOCH FROM (min(GREATEST(available_at, clock_timestamp())) - clock_timestamp()))::float8
                FROM lastfm_permit WHERE NOT held
                """, logger: logger)
            for try await seconds in next.decode(Double?.self) {
                if let seconds { wait = min(windowSeconds, max(0.005, seconds)) }
            }
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    public func acquireIfFree(leaving spare: Int) async throws -> (permit: Int?, retryAfter: Duration) {
        let leaseSeconds = Self.seconds(lease)
        // The free rows are locked while counted, so the count holds.
        let taken = try await database.client.query("""
            WITH free AS (
                SELECT slot, available_at FROM lastfm_permit WHERE available_at <= clock_timestamp() FOR UPDATE SKIP LOCKED),
            chosen AS (SELECT slot FROM free WHERE (SELECT count(*) FROM free) > \(Int64(max(0, spare))) ORDER BY available_at LIMIT 1)
            UPDATE lastfm_permit p SET held = true, available_at = clock_timestamp() + make_interval(secs => \(leaseSeconds))
            FROM chosen WHERE p.slot = chosen.slot RETURNING p.slot
            """, logger: logger)
        for try await slot in taken.decode(Int32.self) { return (Int(slot), .zero) }
        // Asked again soon: a fleet's permits come back at any moment.
        return (nil, .milliseconds(50))
    }

    public func release(_ permit: Int) async {
        let windowSeconds = Self.seconds(window)
        do {
            try await database.client.query("""
                UPDATE lastfm_permit SET held = false, available_at = clock_timestamp() + make_interval(secs => \(windowSeconds))
                WHERE slot = \(Int32(permit))
                """, logger: logger)
        } catch {
            // The permit comes back when its lease ends.
            logger.warning("could not return a Last.fm permit: \(String(reflecting: error).prefix(200))")
        }
    }
}
