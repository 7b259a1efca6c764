import Foundation
import Synchronization
import VinylogueCore

/// How many requests one credential (a listen token on `/1/`, a session key
/// or a sign-in name on `/2.0/`) may make in a window, counted in memory on
/// this instance, so a player gone wrong cannot flood the archive.
///
/// Fixed windows that start at a credential's first request: the first
/// `limit` requests of a window pass, the rest are refused until it ends.
/// The default, 1,200 requests per 10 s (120 a second, each of up to 1,000
/// listens on `/1/` or 50 on `/2.0/`), is far above any real player (one
/// listen every few minutes) and lets 64 clients with their own tokens send
/// over 5,000 single listens a second together; a benchmark that sends
/// everything with one token raises it (`serve --listen-rate-limit`, 0 turns
/// it off). Credentials are counted by their SHA-256 digest, never kept as
/// themselves.
package final class ListenRateLimit: Sendable {
    /// What one request was told.
    package struct Decision: Sendable, Equatable {
        package let allowed: Bool
        /// Requests a window allows.
        package let limit: Int
        /// Requests left in this window after this one.
        package let remaining: Int
        /// Whole seconds until the window ends (at least 1).
        package let resetIn: Int
        /// When the window ends, in Unix seconds.
        package let resetAt: Int64
    }

    /// Requests a window allows; 0: no limit.
    package let limit: Int
    package let window: TimeInterval
    private let clock: WallClock
    private let windows = Mutex([String: (start: Date, count: Int)]())
    /// At most this many credentials are remembered before ended windows are dropped.
    private static let remembered = 10_000

    package static let defaultLimit = 1200
    package static let defaultWindow: TimeInterval = 10

    package init(clock: WallClock, limit: Int = ListenRateLimit.defaultLimit, window: TimeInterval = ListenRateLimit.defaultWindow) {
        self.clock = clock
        self.limit = limit
        self.window = window
    }

    /// Counts one request by `credential` (a digest) and says whether it may go on.
    package func take(_ credential: String) -> Decision {
        let now = clock.now
        guard limit > 0 else { return Decision(allowed: true, limit: 0, remaining: 0, resetIn: 1, resetAt: Int64(now.timeIntervalSince1970)) }
        let (start, count) = windows.withLock { windows in
            if windows.count >= Self.remembered {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
                // Still full (a flood of made-up credentials): forget every count
                // rather than scan the map on each request.
                if windows.count >= Self.remembered / 2 { windows = [:] }
            }
            var current = windows[credential] ?? (start: now, count: 0)
            if now.timeIntervalSince(current.start) >= window || now < current.start { current = (start: now, count: 0) }
            current.count += 1
            windows[credential] = current
            return current
        }
        let end = start.addingTimeInterval(window)
        return Decision(allowed: count <= limit, limit: limit, remaining: max(0, limit - count),
                        resetIn: max(1, Int(end.timeIntervalSince(now).rounded(.up))), resetAt: Int64(end.timeIntervalSince1970.rounded(.up)))
    }
}
