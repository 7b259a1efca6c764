import Foundation
import Logging
import ServiceLifecycle
import Stores
import Synchronization
import VinylogueCore

/// The one runner of the job queue: claims the due jobs its handlers know
/// (the ones this machine may run), at most each kind's `slots` at a time, each with a
/// lease it renews while the job runs; records how each run ended; takes
/// over jobs whose holder has ended or whose lease ran out. It wakes when
/// a job is queued (`wakeup`), when the next queued job falls due, and at
/// least every `poll`. Cancelled (the server's graceful shutdown), it stops
/// claiming and its running jobs are cancelled; each hands its job back
/// for the next start. On PostgreSQL every instance runs one, and each job
/// runs in one of them.
public final class JobRunner: Service, Sendable {
    public let queue: any JobQueue
    /// The handlers by kind: given at `init`, and by `register` before the
    /// runner starts (a handler made later in the composition, such as
    /// the web app's digests).
    private let registered: Mutex<[JobKind: any JobHandler]>
    /// Set once `run` begins: no handler may be registered after.
    private let started = Mutex(false)
    let clock: WallClock
    let machine: String
    let lease: TimeInterval
    let poll: Duration
    /// Signalled when a job is queued: the runner looks at once.
    public let wakeup: Wakeup
    let logger: Logger
    /// What runs here: jobs by kind, claims under way, and how many claims
    /// were ever begun (so `idle` can tell that none began while it read
    /// the queue).
    private let busy = Mutex(Activity())

    struct Activity {
        var running: [JobKind: Int] = [:]
        var claiming = 0
        var claimsBegun = 0

        var isQuiet: Bool { claiming == 0 && running.values.allSatisfy { $0 == 0 } }
    }
    /// Callers of `idle`, woken whenever a job here ends.
    private let endWaiters = Mutex<[Wakeup]>([])
    /// When ended jobs were last forgotten.
    private let tidied = Mutex<Date?>(nil)
    /// How long an ended job's row is kept (for Settings and the metrics).
    public static let endedJobsKept: TimeInterval = 90 * 86_400

    public init(queue: any JobQueue, handlers: [any JobHandler], clock: WallClock, wakeup: Wakeup, machine: String = JobHolder.machine(),
                lease: TimeInterval = 120, poll: Duration = .seconds(30), logger: Logger = Logger(label: "vinylogue.jobs")) {
        self.queue = queue
        self.registered = Mutex(Dictionary(handlers.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first }))
        self.clock = clock
        self.wakeup = wakeup
        self.machine = machine
        self.lease = lease
        self.poll = poll
        self.logger = logger
    }

    /// Adds the handler of a kind this runner had none for. Only before
    /// the runner runs: a kind added later would find the loop's looks
    /// and slots already counted without it.
    public func register(_ handler: any JobHandler) {
        precondition(!started.withLock { $0 }, "a job handler (\(handler.kind)) was registered after the job runner started")
        registered.withLock { handlers in
            precondition(handlers[handler.kind] == nil, "two job handlers of kind \(handler.kind)")
            handlers[handler.kind] = handler
        }
    }

    /// The handlers by kind.
    var handlers: [JobKind: any JobHandler] { registered.withLock { $0 } }

    /// The kinds this runner has handlers for.
    public var kinds: Set<JobKind> { Set(handlers.keys) }

    /// Runs jobs until the server begins to stop.
    public func run() async throws {
        await runUntilStopped(patience: .seconds(10))
    }

    /// Runs jobs until the server begins to stop (or this task is
    /// cancelled); then stops claiming, cancels the running jobs and waits
    /// for them to hand their jobs back, at most `patience`: a job that does
    /// not end by then (an import's thread mid-batch) must not keep the
    /// process from exiting. Its row stays claimed by this process, which
    /// the next start takes over at once (`JobHolder`), and anyone else once
    /// its lease runs out.
    public func runUntilStopped(patience: Duration) async {
        let ended = Wakeup()
        let loop = Task {
            await self.runUntilCancelled()
            ended.signal()
        }
        let stop: @Sendable () -> Void = {
            loop.cancel()
            Task {
                try? await Task.sleep(for: patience)
                ended.signal()
            }
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await ended.wait()
            } onGracefulShutdown: {
                stop()
            }
        } onCancel: {
            stop()
        }
    }

    /// Runs jobs until the task is cancelled.
    public func runUntilCancelled() async {
        started.withLock { $0 = true }
        let handlers = self.handlers
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                for handler in handlers.values { await handler.look(at: clock.now) }
                while !Task.isCancelled {
                    let kinds = busy.withLock { activity in
                        activity.claiming += 1
                        activity.claimsBegun += 1
                        return freeKinds(activity)
                    }
                    let claim = await claimNext(of: kinds)
                    busy.withLock { activity in
                        activity.claiming -= 1
                        if let claim { activity.running[claim.job.kind, default: 0] += 1 }
                    }
                    guard let claim else { break }
                    group.addTask {
                        await self.work(claim)
                        self.busy.withLock { $0.running[claim.job.kind, default: 1] -= 1 }
                        self.endWaiters.withLock { waiters in
                            defer { waiters.removeAll() }
                            return waiters
                        }.forEach { $0.signal() }
                        // A free slot: look again at once.
                        self.wakeup.signal()
                    }
                }
                await forgetEndedJobs()
                await wakeup.wait(atMost: await nextLook())
            }
        }
    }

    /// Returns once no job runs here and none this runner may claim is due
    /// (for tests and the command line): wakes whenever a job here ends,
    /// and looks again every `recheck`.
    public func idle(recheck: Duration = .milliseconds(50)) async {
        while !Task.isCancelled {
            let before = busy.withLock { $0.isQuiet ? $0.claimsBegun : nil }
            if let before {
                let due = (try? await queue.nextDue(of: kinds, on: machine)) ?? nil
                // Quiet throughout the read: no claim began meanwhile.
                let quiet = busy.withLock { $0.isQuiet && $0.claimsBegun == before }
                if quiet, due.map({ $0 > clock.now }) ?? true { return }
            }
            let ended = Wakeup()
            endWaiters.withLock { $0.append(ended) }
            await ended.wait(atMost: recheck)
        }
    }

    /// Claims and runs one job now, on the calling task; false when none
    /// was due. For the command line and tests.
    @discardableResult
    public func runNext() async -> Bool {
        guard let claim = await claimNext(of: kinds) else { return false }
        await work(claim)
        return true
    }

    /// The kinds with a slot free here.
    func freeKinds(_ activity: Activity) -> Set<JobKind> {
        Set(handlers.values.filter { activity.running[$0.kind, default: 0] < max(1, $0.slots) }.map(\.kind))
    }

    func claimNext(of kinds: Set<JobKind>) async -> JobClaim? {
        guard !kinds.isEmpty else { return nil }
        do {
            return try await queue.claimNext(of: kinds, on: machine, as: JobHolder.name(), at: clock.now, lease: lease,
                                             takingOverFrom: JobHolder.isGone)
        } catch {
            logger.warning("\("Could not look for work in the job queue: \(error)")")
            return nil
        }
    }

    /// Deletes the rows of jobs that ended long ago, at most once an hour.
    func forgetEndedJobs() async {
        let now = clock.now
        let due = tidied.withLock { last -> Bool in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        _ = try? await queue.forget(endedBefore: now.addingTimeInterval(-Self.endedJobsKept))
    }

    /// How long to wait before looking again: until the next job falls
    /// due, at most `poll`; at once when a job's holder on this machine has
    /// ended, and within `siblingPoll` while another process of this
    /// machine holds one (killed, its jobs are taken over in a second, not
    /// when the poll or the lease comes round; a fleet on one machine).
    func nextLook() async -> Duration {
        var limit = poll
        if let holders = try? await queue.runningHolders(of: kinds, on: machine) {
            let here = JobHolder.machine() + "/", mine = here + String(getpid()) + "/"
            if holders.contains(where: JobHolder.isGone) { return .milliseconds(50) }
            if holders.contains(where: { $0.hasPrefix(here) && !$0.hasPrefix(mine) }) { limit = min(limit, Self.siblingPoll) }
        }
        guard let due = try? await queue.nextDue(of: kinds, on: machine) else { return limit }
        let wait = due.timeIntervalSince(clock.now)
        guard wait > 0 else { return .milliseconds(50) }
        return min(limit, .milliseconds(Int64(min(wait, 86_400) * 1000) + 1))
    }

    /// How often a runner looks while another process of its machine
    /// holds a job it could take over.
    static let siblingPoll: Duration = .seconds(1)

    /// Runs a claimed job under a renewed lease and records how it ended.
    func work(_ claim: JobClaim) async {
        guard let handler = handlers[claim.job.kind] else { return }
        let ending = await Self.renewing(claim, in: queue, clock: clock, lease: lease) { await handler.run(claim) }
        await record(ending, of: claim)
    }

    /// What `body` returns, run while `claim`'s lease is renewed every third
    /// of `lease`: a job held this way is taken over only when its holder
    /// is gone or stopped renewing. The runner's jobs, and the one a
    /// command claims by key (`vinylogue digest send`).
    package static func renewing<Value: Sendable, Failure: Error>(_ claim: JobClaim, in queue: any JobQueue, clock: WallClock,
                                                                  lease: TimeInterval,
                                                                  during body: () async throws(Failure) -> Value) async throws(Failure) -> Value {
        let renewal = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(max(1, lease / 3)))
                _ = try? await queue.renew(claim, at: clock.now, lease: lease)
            }
        }
        defer { renewal.cancel() }
        return try await body()
    }

    /// Writes how the run ended, trying again for about half a minute when
    /// the database does not take it (else the job would run once more
    /// when its lease runs out). It is written in a task of its own: a run
    /// stopped with the server ends in a cancelled task, where the
    /// database calls would refuse to start, and its job must be handed back.
    func record(_ ending: JobEnding, of claim: JobClaim) async {
        await Task { await self.write(ending, of: claim) }.value
    }

    private func write(_ ending: JobEnding, of claim: JobClaim) async {
        var wait = Duration.milliseconds(500)
        for attempt in 1...6 {
            do {
                _ = try await queue.end(claim, as: ending, at: clock.now)
                return
            } catch {
                if attempt == 6 {
                    logger.error("\("Could not record how job \(claim.job.id) (\(claim.job.kind)) ended: \(error)")")
                    return
                }
                try? await Task.sleep(for: wait)
                wait *= 2
            }
        }
    }
}
