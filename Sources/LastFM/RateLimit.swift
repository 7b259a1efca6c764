import Synchronization

/// A rate limit that holds even as the upstream sees it: at most `limit`
/// requests arrive in any `window`.
///
/// Each request holds one of `limit` permits from the moment it starts until
/// `window` after its answer arrived. A request reaches the upstream somewhere
/// between its start and its answer, so any `limit + 1` arrivals span at
/// least `window`, however the network delays them.
///
/// A released permit is not handed back by a task of its own: it carries the
/// instant it returns, and a waiter sleeps (in its own task) until the first
/// one does. Nothing outlives the requests, so nothing needs stopping.
public final class RateLimit: LastFMRequestPermits {
    private struct Permits {
        /// Held by requests under way.
        var inUse = 0
        /// When each released permit comes back.
        var returning: [ContinuousClock.Instant] = []
    }

    private let limit: Int
    private let window: Duration
    private let permits = Mutex(Permits())

    public init(limit: Int, window: Duration) {
        self.limit = max(1, limit)
        self.window = window
    }

    /// Waits for a permit; throws only if the waiting task is cancelled.
    public func acquire() async throws -> Int {
        while true {
            let wake = permits.withLock { p -> ContinuousClock.Instant? in
                let now = ContinuousClock.now
                p.returning.removeAll { $0 <= now }
                if p.inUse + p.returning.count < limit {
                    p.inUse += 1
                    return nil
                }
                // Every permit is out: the first back is either one already
                // released, or one released from now on (a window away at least).
                return p.returning.min() ?? now.advanced(by: window)
            }
            guard let wake else { return 0 }
            try await Task.sleep(until: wake, clock: .continuous)
        }
    }

    public func acquireIfFree(leaving spare: Int) async throws -> (permit: Int?, retryAfter: Duration) {
        permits.withLock { p in
            let now = ContinuousClock.now
            p.returning.removeAll { $0 <= now }
            if limit - p.inUse - p.returning.count > max(0, spare) {
                p.inUse += 1
                return (0, .zero)
            }
            return (nil, (p.returning.min() ?? now.advanced(by: window)) - now)
        }
    }

    /// Gives the permit back, `window` after now.
    public func release(_ permit: Int = 0) {
        permits.withLock { p in
            p.inUse -= 1
            p.returning.append(ContinuousClock.now.advanced(by: window))
        }
    }
}

/// Joins identical requests that are in flight into one.
///
/// Each run is an unstructured task: a caller that stops waiting (see
/// `AnswerDeadline`) leaves it running, so its answer still reaches the
/// cache.
actor InFlightRequests<Value: Sendable> {
    private var tasks: [String: Task<Value, any Error>] = [:]

    /// The run under way for `key`, or a new one doing `work`.
    func task(_ key: String, _ work: @escaping @Sendable () async throws -> Value) -> Task<Value, any Error> {
        if let running = tasks[key] { return running }
        let task = Task {
            do {
                let value = try await work()
                self.finished(key)
                return value
            } catch {
                self.finished(key)
                throw error
            }
        }
        tasks[key] = task
        return task
    }

    private func finished(_ key: String) {
        tasks[key] = nil
    }
}
