import ServiceLifecycle

/// The owner of work a request starts but does not wait for to finish: the
/// year before fetched ahead, Last.fm's spelling of a name, album colours.
///
/// At most `limit` jobs run at once and the rest queue, so a burst of pages
/// cannot start unbounded work; as a `Service` it cancels what is left when
/// the server shuts down; and `idle()` lets a test wait until everything
/// started has finished, instead of polling.
public actor BackgroundWork: Service {
    private let limit: Int
    private var running = 0
    private var pending = 0
    private var nextID = 0
    private var stopped = false
    private var slotWaiters: [CheckedContinuation<Void, Never>] = []
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var cancellers: [Int: @Sendable () -> Void] = [:]

    public init(limit: Int = 8) {
        self.limit = max(1, limit)
    }

    /// Starts `work`, after others when `limit` are running. Its result is
    /// the task's value: nil when the work was cancelled before it began.
    /// Pair with `Task.value(within:)` to wait a bounded time for it.
    public func start<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> Task<T?, Never> {
        guard !stopped else { return Task { nil } }
        let id = nextID
        nextID += 1
        pending += 1
        let task = Task<T?, Never> {
            await self.takeSlot()
            let result: T? = Task.isCancelled ? nil : await work()
            self.finished(id)
            return result
        }
        cancellers[id] = { task.cancel() }
        return task
    }

    /// Returns once every job started so far (and any they started) has ended.
    public func idle() async {
        guard pending > 0 else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Runs until the server shuts down, then cancels what is left.
    public func run() async throws {
        try? await gracefulShutdown()
        stop()
    }

    /// Cancels every job and refuses new ones.
    public func stop() {
        stopped = true
        cancellers.values.forEach { $0() }
        let waiters = slotWaiters
        slotWaiters.removeAll()
        running += waiters.count
        waiters.forEach { $0.resume() }
    }

    private func takeSlot() async {
        if running < limit || stopped {
            running += 1
            return
        }
        // `finished` hands its slot straight to the first waiter.
        await withCheckedContinuation { slotWaiters.append($0) }
    }

    private func finished(_ id: Int) {
        cancellers[id] = nil
        pending -= 1
        if slotWaiters.isEmpty {
            running -= 1
        } else {
            slotWaiters.removeFirst().resume()
        }
        if pending == 0 {
            let waiters = idleWaiters
            idleWaiters.removeAll()
            waiters.forEach { $0.resume() }
        }
    }
}
