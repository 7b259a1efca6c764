import Foundation
import Synchronization

/// The threads the web server's requests run on, outside Swift's
/// cooperative pool, on which a store may run a short read where the
/// request is instead of sending it to the database's own queue.
///
/// A cold chart's read takes about 0.1 ms. Awaited on GRDB's reader queue
/// it took 0.25 ms: the rest was two thread wake-ups, to the reader and
/// back. A task that prefers these threads (`running(_:)`, around the
/// server) may block one of them for such a read, so Swift's pool (one
/// thread per core, needed by every task) is never held. Stores read inline
/// only when `currentIndex` says the caller is on one of these threads,
/// only for reads known to be short, and only on a connection that thread
/// owns: a thread here must never wait for something another task holds
/// (a pooled reader), since that task may need one of these threads to let
/// go of it. Long reads still go to the database's queue.
///
/// Made by the composition root, one per process, and stopped when it ends.
public final class RequestThreads: TaskExecutor, @unchecked Sendable {
    /// Guards every field below but `identities` (written under it while
    /// `init` waits, read-only after).
    private let condition = NSCondition()
    private var waiting: [UnownedJob] = []
    private var next = 0
    /// Threads asleep, and those of them signalled but not yet awake.
    private var idle = 0
    private var waking = 0
    /// How many jobs wait, read without the lock by threads looking for work.
    private let queued = Atomic<Int>(0)
    private var live = 0
    private var stopped = false
    private var identities: [pthread_t] = []

    /// How many the server runs: one fewer than the readers SQLite keeps
    /// (GRDB's pool has five), so a request reading inline never waits for
    /// a reader while a job's read holds the last one; more than the cores,
    /// so a thread blocked in a read leaves the others working.
    public static let standardCount = 4

    /// Starts `count` threads named `name`, returning once each runs.
    public init(count: Int, name: String = "vinylogue.request") {
        precondition(count > 0, "RequestThreads needs at least one thread")
        condition.lock()
        defer { condition.unlock() }
        for index in 0..<count {
            let thread = Thread { [self] in serve() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
        while identities.count < count { condition.wait() }
        live = count
    }

    /// Whether the calling thread is one of these.
    public var isCurrent: Bool { currentIndex != nil }

    /// Which of these the calling thread is (0 up to `count`), or nil
    /// when it is none of them: a store keeps a connection per thread.
    public var currentIndex: Int? {
        let caller = pthread_self()
        return identities.firstIndex { pthread_equal($0, caller) != 0 }
    }

    /// How many threads there are.
    public var count: Int { identities.count }

    /// Runs `operation` with its task (and the child tasks it makes)
    /// preferring these threads.
    public func running<T, Failure: Error>(isolation: isolated (any Actor)? = #isolation,
                                           _ operation: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(self, isolation: isolation, operation: operation)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if stopped && live == 0 {
            condition.unlock()
            // A straggler after `stop`: it still has to run somewhere.
            let executor = asUnownedTaskExecutor()
            Thread.detachNewThread { job.runSynchronously(on: executor) }
            return
        }
        waiting.append(job)
        queued.add(1, ordering: .releasing)
        // Wakes a sleeper only when no thread is awake to take it: one
        // still running or looking finds it; one already woken takes it.
        let wake = idle > waking
        if wake { waking += 1 }
        condition.unlock()
        // Signalled outside the lock, so the woken thread does not wake
        // only to wait for it.
        if wake { condition.signal() }
    }

    /// Lets each thread end once nothing is waiting. Jobs that arrive
    /// afterwards each run on a thread of their own.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func serve() {
        let executor = asUnownedTaskExecutor()
        condition.lock()
        identities.append(pthread_self())
        condition.broadcast()
        condition.unlock()
        while true {
            if let job = take() {
                job.runSynchronously(on: executor)
                continue
            }
            // Nothing waiting: look again a few times, giving the processor
            // away in between, before sleeping. Under load the next job
            // comes within microseconds, and finding it so costs neither
            // thread a wake-up through the kernel.
            var found = false
            for _ in 0..<Self.looks {
                sched_yield()
                if queued.load(ordering: .acquiring) > 0 { found = true; break }
            }
            if found { continue }
            condition.lock()
            while next == waiting.count && !stopped {
                idle += 1
                condition.wait()
                idle -= 1
                if waking > 0 { waking -= 1 }
            }
            let done = next == waiting.count
            if done { live -= 1 }
            condition.unlock()
            if done { return }
        }
    }

    /// How often an idle thread looks for work before it sleeps.
    private static let looks = 16

    /// The next job waiting, if any.
    private func take() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        guard next < waiting.count else { return nil }
        let job = waiting[next]
        next += 1
        queued.subtract(1, ordering: .relaxed)
        if next == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            next = 0
        } else if next >= 1024 {
            waiting.removeFirst(next)
            next = 0
        }
        return job
    }
}
