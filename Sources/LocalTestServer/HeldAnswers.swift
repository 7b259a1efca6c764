import Synchronization

/// Answers a fake service holds back until told to let them go: how a
/// test makes a service that took a request and has not answered yet (a
/// timeout, a server killed mid-send), and waits for that moment as an
/// event rather than by sleeping.
public final class HeldAnswers: Sendable {
    private struct State {
        var held: [CheckedContinuation<Void, Never>] = []
        /// The most answers ever held at once.
        var most = 0
        var waiters: [(count: Int, waiter: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Holds the calling answer back until `releaseAll()`.
    public func hold() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                state.held.append(continuation)
                let count = state.held.count
                state.most = max(state.most, count)
                let ready = state.waiters.filter { $0.count <= count }
                state.waiters.removeAll { $0.count <= count }
                return ready
            }
            ready.forEach { $0.waiter.resume() }
        }
    }

    /// Lets every held answer go.
    public func releaseAll() {
        let waiting = state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        waiting.forEach { $0.resume() }
    }

    /// Lets the answer held longest go, if any.
    public func releaseFirst() {
        let first = state.withLock { state in state.held.isEmpty ? nil : state.held.removeFirst() }
        first?.resume()
    }

    /// The most answers that were ever held back at once: how a test sees
    /// a bound on concurrent requests without waiting for a request that
    /// must not come.
    public var mostHeldAtOnce: Int { state.withLock { $0.most } }

    /// Returns once at least `count` answers are held back.
    public func untilHolding(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.held.count < count else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
