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
