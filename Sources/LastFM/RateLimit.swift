/// A rate limit that holds even as the upstream sees it: at most `limit`
/// requests arrive in any `window`.
///
/// Each request holds one of `limit` permits from the moment it starts until
/// `window` after its answer arrived. A request reaches the upstream somewhere
/// between its start and its answer, so any `limit + 1` arrivals span at
/// least `window`, however the network delays them.
actor RateLimit {
    private let window: Duration
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int, window: Duration) {
        self.window = window
        self.available = max(1, limit)
    }

    /// Waits for a permit.
    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives the permit back `window` after the request finished.
    nonisolated func release() {
        Task {
            try? await Task.sleep(for: window)
            await self.giveBack()
        }
    }

    private func giveBack() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
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
