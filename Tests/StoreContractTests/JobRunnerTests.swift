import Foundation
import Stores
import Synchronization
import Testing
import TestSupport
import VinylogueCore
import Workers

/// The one runner over the one queue, on both stores: it runs what is
/// queued when woken, no more at once than its slots, records each run's
/// ending, and hands a job back untouched when it is stopped.
@Suite struct JobRunnerTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ")
    static let kind = JobKind(rawValue: "test")

    /// A handler that reports each run as it starts and ends it as the
    /// test says: at once with `ending`, or when the run's task is cancelled.
    final class RecordingHandler: JobHandler {
        let kind = JobRunnerTests.kind
        let slots: Int
        let started = AsyncStream<JobClaim>.makeStream()
        let ending: JobEnding?
        let running = Mutex((now: 0, most: 0))

        init(ending: JobEnding?, slots: Int = 1) {
            self.ending = ending
            self.slots = slots
        }

        func run(_ claim: JobClaim) async -> JobEnding {
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            defer { running.withLock { $0.now -= 1 } }
            started.continuation.yield(claim)
            if let ending { return ending }
            // Held until the runner is cancelled.
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            await withTaskCancellationHandler {
                for await _ in stream {}
            } onCancel: {
                continuation.finish()
            }
            return .stopped
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aQueuedJobRunsWhenTheRunnerIsWokenAndItsEndingIsRecorded(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let handler = RecordingHandler(ending: .retry(at: Self.now.addingTimeInterval(600), reason: "Last.fm did not answer."))
            let wakeup = Wakeup()
            let runner = JobRunner(queue: stores.jobs, handlers: [handler], clock: .fixed(Self.now), wakeup: wakeup, machine: "m",
                                   poll: .seconds(10))
            let loop = Task { await runner.runUntilCancelled() }
            let job = try await stores.jobs.enqueue(Self.kind, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.now)
            wakeup.signal()
            var runs = handler.started.stream.makeAsyncIterator()
            let claim = try #require(await runs.next())
            #expect(claim.job.id == job.id)
            // The ending is recorded after the run returns: wait for the row.
            var row = try await stores.jobs.job(job.id)
            while row?.state != .queued { await Task.yield(); row = try await stores.jobs.job(job.id) }
            #expect(row?.reason == "Last.fm did not answer." && row?.notBefore == Self.now.addingTimeInterval(600) && row?.holder == nil)
            loop.cancel()
            await loop.value
        }
    }

    /// A job held under `renewing` (the runner's, and the one `vinylogue
    /// digest send` claims by key) keeps its lease past the first one while
    /// it runs, so nobody takes it over; once it is done, its lease runs out.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aJobHeldWhileItRunsIsRenewedAndNotTakenOver(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let instant = Mutex(Self.now)
            let clock = WallClock { instant.withLock { $0 } }
            let job = try await stores.jobs.enqueue(Self.kind, for: Self.rj, key: "held", payload: "", machine: nil, notBefore: nil, at: Self.now)
            let claim = try #require(try await stores.jobs.claim(Self.kind, key: "held", as: "command", at: Self.now, lease: 3,
                                                                  takingOverFrom: { _ in false }))
            let renewedUntil = Self.now.addingTimeInterval(5)
            try await JobRunner.renewing(claim, in: stores.jobs, clock: clock, lease: 3) {
                instant.withLock { $0 = Self.now.addingTimeInterval(2) }
                // The renewal comes a second in (a third of the lease).
                let deadline = ContinuousClock.now + .seconds(10)
                while try await stores.jobs.job(job.id)?.leaseUntil != renewedUntil {
                    guard ContinuousClock.now < deadline else { Issue.record("the lease was not renewed within 10 s"); return }
                    try await Task.sleep(for: .milliseconds(20))
                }
                // Past the first lease, within the renewed one: nobody takes it.
                instant.withLock { $0 = Self.now.addingTimeInterval(4) }
                #expect(try await stores.jobs.claim(Self.kind, key: "held", as: "other", at: clock.now, lease: 3,
                                                    takingOverFrom: { _ in false }) == nil)
            }
            // Done and no longer renewed: another holder takes it once the lease ran out.
            #expect(try await stores.jobs.claim(Self.kind, key: "held", as: "other", at: renewedUntil.addingTimeInterval(1), lease: 3,
                                                takingOverFrom: { _ in false }) != nil)
        }
    }

    /// Instances of a fleet on one machine: one holding a job is killed;
    /// another, waiting with nothing to do, takes the job over within a
    /// second or two, not when its poll (here 10 s) or the lease comes round.
    /// (A history copy held by a killed instance waited that long.)
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aJobOfAKilledProcessOfThisMachineIsTakenOverSoon(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            // A `ChildProcess` (posix_spawn, reaped on a thread of its own):
            // Foundation's `Process` crashed the test process in libdispatch.
            let sibling = ChildProcess()
            sibling.executableURL = URL(fileURLWithPath: "/bin/sleep")
            sibling.arguments = ["30"]
            try sibling.run()
            let holder = JobHolder.machine() + "/\(sibling.processIdentifier)/sibling"
            _ = try await stores.jobs.enqueue(Self.kind, for: Self.rj, key: "held", payload: "", machine: nil, notBefore: nil, at: Self.now)
            _ = try #require(try await stores.jobs.claim(Self.kind, key: "held", as: holder, at: Self.now, lease: 600,
                                                          takingOverFrom: { _ in false }))
            let handler = RecordingHandler(ending: .done)
            let runner = JobRunner(queue: stores.jobs, handlers: [handler], clock: .fixed(Self.now), wakeup: Wakeup(), machine: "m",
                                   poll: .seconds(10))
            let loop = Task { await runner.runUntilCancelled() }
            // The runner has looked, found the job held, and waits.
            await runner.idle()
            kill(sibling.processIdentifier, SIGKILL)
            // Reaped by its own waiting thread, within moments.
            let reaped = ContinuousClock.now + .seconds(5)
            while !JobHolder.isGone(holder), ContinuousClock.now < reaped { try await Task.sleep(for: .milliseconds(10)) }
            #expect(JobHolder.isGone(holder), "the killed sibling still looks alive")
            let taken = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    var runs = handler.started.stream.makeAsyncIterator()
                    return await runs.next() != nil
                }
                // Half the poll: only looking sooner than the poll takes it.
                group.addTask { try? await Task.sleep(for: .seconds(5)); return false }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            #expect(taken, "the job of the killed holder was not taken over within 5 s")
            loop.cancel()
            await loop.value
        }
    }

    /// A job that ignores being stopped (an import's thread mid-batch) does
    /// not keep the runner, and so the server, from stopping: it waits for
    /// it only so long.
    @Test(.timeLimit(.minutes(1)))
    func aJobThatDoesNotStopDoesNotHoldTheRunnerPastItsPatience() async throws {
        try await StoreContractTests.withStores(.sqlite) { stores in
            let handler = StubbornHandler()
            _ = try await stores.jobs.enqueue(Self.kind, for: Self.rj, key: "stubborn", payload: "", machine: nil, notBefore: nil, at: Self.now)
            let runner = JobRunner(queue: stores.jobs, handlers: [handler], clock: .fixed(Self.now), wakeup: Wakeup(), machine: "m",
                                   poll: .seconds(10))
            let running = Task { await runner.runUntilStopped(patience: .milliseconds(200)) }
            var runs = handler.started.stream.makeAsyncIterator()
            _ = await runs.next()
            running.cancel()
            // Returns after its patience though the job still runs.
            await running.value
            #expect(handler.finished.withLock { $0 } == false)
            #expect(try await stores.jobs.counts(of: Self.kind) == [.running: 1])
            handler.letGo()
        }
    }

    /// Runs until the test releases it, whatever cancellation says.
    final class StubbornHandler: JobHandler {
        let kind = JobRunnerTests.kind
        let started = AsyncStream<Void>.makeStream()
        let finished = Mutex(false)
        /// The run's wait, which cancellation does not end.
        let waiting = Mutex<(released: Bool, run: CheckedContinuation<Void, Never>?)>((false, nil))

        func run(_ claim: JobClaim) async -> JobEnding {
            started.continuation.yield()
            await withCheckedContinuation { continuation in
                let now = waiting.withLock { state -> Bool in
                    if state.released { return true }
                    state.run = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            finished.withLock { $0 = true }
            return .done
        }

        func letGo() {
            waiting.withLock { state -> CheckedContinuation<Void, Never>? in
                state.released = true
                defer { state.run = nil }
                return state.run
            }?.resume()
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func noMoreRunAtOnceThanTheSlotsAndAStoppedRunnerHandsEachJobBack(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let handler = RecordingHandler(ending: nil, slots: 2)
            for n in 0..<3 {
                _ = try await stores.jobs.enqueue(Self.kind, for: Self.rj, key: "job-\(n)", payload: "", machine: nil, notBefore: nil, at: Self.now)
            }
            let runner = JobRunner(queue: stores.jobs, handlers: [handler], clock: .fixed(Self.now), wakeup: Wakeup(), machine: "m",
                                   poll: .seconds(10))
            let loop = Task { await runner.runUntilCancelled() }
            var runs = handler.started.stream.makeAsyncIterator()
            _ = await runs.next()
            _ = await runs.next()
            // Two run; the third waits for a slot.
            #expect(try await stores.jobs.counts(of: Self.kind) == [.running: 2, .queued: 1])
            loop.cancel()
            await loop.value
            #expect(handler.running.withLock { $0.most } == 2)
            // Each stopped run gave its job back, its try not counted.
            #expect(try await stores.jobs.counts(of: Self.kind) == [.queued: 3])
            for n in 0..<3 {
                let job = try #require(try await stores.jobs.jobs(of: Self.kind, key: "job-\(n)").first)
                #expect(job.attempts == 0 && job.holder == nil)
            }
        }
    }
}
