import Foundation

/// What ListenBrainz last said about its rate limit (`X-RateLimit-Remaining`
/// and `X-RateLimit-Reset-In`), shared by every request of one client: when
/// the window is spent, the next request waits for the reset instead of
/// earning a 429.
actor RateBudget {
    private var remaining: Int?
    private var resetAt: ContinuousClock.Instant?

    /// Takes one request from the budget; the wait before it may be sent
    /// (zero when the window has room or nothing is known).
    func take(now: ContinuousClock.Instant, longest: Duration) -> Duration {
        if let resetAt, now >= resetAt {
            self.remaining = nil
            self.resetAt = nil
        }
        guard let left = remaining else { return .zero }
        if left > 0 {
            remaining = left - 1
            return .zero
        }
        guard let resetAt else { return .zero }
        // After the reset the window is new; what it holds is learned from
        // the next answer.
        remaining = nil
        self.resetAt = nil
        return min(resetAt - now, longest)
    }

    /// Notes an answer's headers.
    func note(remaining: Int?, resetIn: Int?, now: ContinuousClock.Instant) {
        if let remaining { self.remaining = remaining }
        if let resetIn { resetAt = now + .seconds(resetIn) }
    }
}
