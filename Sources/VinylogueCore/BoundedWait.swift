import Synchronization

extension Task {
    /// The task's result if it ends within `patience`; `nil` once `patience`
    /// has passed without one.
    ///
    /// Giving up never cancels the task: it carries on and can leave its
    /// result where the next caller finds it (a cache, a lookup table).
    /// Unlike racing `task.value` in a task group — which cannot return
    /// before the task ends, since a group waits for all its children and
    /// awaiting a task's value ignores cancellation — this returns as soon as
    /// `patience` is up.
    public func result(within patience: Duration) async -> Result<Success, Failure>? {
        let outcome = FirstOutcome<Result<Success, Failure>?>()
        return await withCheckedContinuation { continuation in
            outcome.arm(continuation)
            let timer = Task<Void, Never> {
                try? await Task<Never, Never>.sleep(for: patience)
                outcome.resume(with: nil)
            }
            Task<Void, Never> {
                let result = await self.result
                outcome.resume(with: result)
                timer.cancel()
            }
        }
    }
}

extension Task where Failure == Never {
    /// The task's value if it ends within `patience`; `nil` otherwise. See
    /// `result(within:)`.
    public func value(within patience: Duration) async -> Success? {
        switch await result(within: patience) {
        case .success(let value): value
        case nil: nil
        }
    }
}

/// Resumes one continuation with whichever outcome arrives first; later
/// ones are dropped.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Value, Never>?, done: Bool)>((nil, false))

    func arm(_ continuation: CheckedContinuation<Value, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func resume(with value: Value) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.done, let continuation = state.continuation else { return nil }
            state.done = true
            state.continuation = nil
            return continuation
        }
        continuation?.resume(returning: value)
    }
}
