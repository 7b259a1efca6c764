/// A sliding-window rate limit: at most `limit` starts in any `window`.
///
/// Each caller is given its start time synchronously inside the actor, so
/// concurrent callers can never both take the same slot while one sleeps.
actor RateLimit {
    private let limit: Int
    private let window: Duration
    private let clock = ContinuousClock()
    /// Start times handed out, oldest first; only the last `limit` matter.
    private var starts: [ContinuousClock.Instant] = []

    init(limit: Int, window: Duration) {
        self.limit = max(1, limit)
        self.window = window
    }

    /// Waits until this caller may start a request.
    func waitForTurn() async throws {
        let now = clock.now
        var slot = now
        if starts.count >= limit {
            slot = max(now, starts[starts.count - limit] + window)
        }
        starts.append(slot)
        if starts.count > limit * 4 { starts.removeFirst(starts.count - limit) }
        if slot > now { try await clock.sleep(until: slot) }
    }
}

/// Joins identical requests that are in flight into one.
actor InFlightRequests<Value: Sendable> {
    private var tasks: [String: Task<Value, any Error>] = [:]

    /// Runs `work` for `key`, or waits for the run already under way.
    func run(_ key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let running = tasks[key] { return try await running.value }
        let task = Task { try await work() }
        tasks[key] = task
        defer { tasks[key] = nil }
        return try await task.value
    }
}
