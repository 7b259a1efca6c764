import Foundation

/// Runs long blocking work on a thread of its own, for async callers.
///
/// An import reads its file and waits for its writer with blocking calls for
/// minutes. Swift's cooperative pool has one thread per core (two here), and
/// every task in the process needs them; blocking one for an import halves
/// the process, blocking both stops it. A thread per import costs nothing
/// by comparison.
public enum DedicatedThread {
    /// Runs `work` on a new thread called `name` and returns what it returns.
    public static func run<Value: Sendable>(named name: String,
                                            _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = name
            thread.start()
        }
    }
}
