import Synchronization

/// A one-slot signal: `wait()` returns at the next `signal()`, or at once
/// when one came since the last wait.
public final class Wakeup: Sendable {
    public init() {}

    private let state = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    public func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Waits for the next signal, for at most `limit`; a cancelled task
    /// stops waiting at once.
    public func wait(atMost limit: Duration) async {
        let timer = Task {
            try await Task.sleep(for: limit)
            self.signal()
        }
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {
            signal()
        }
        timer.cancel()
    }
}
