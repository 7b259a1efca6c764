import Foundation
import Testing
import VinylogueCore
import Stores

/// History copies as durable jobs, on both stores: queued once, claimed by
/// one worker at a time with a lease, taken over when the lease runs out
/// (a worker that died), ended only by their holder, queued again to refresh.
@Suite struct HistoryCopyContractTests {
    typealias Backend = StoreContractTests.Backend

    /// The next copy as the job runner claims it and the copy's handler
    /// begins it.
    static func claimNext(_ stores: StoreContractTests.Stores, as holder: String = JobHolder.name(), at now: Date, lease: TimeInterval,
                          takingOverFrom isGone: @Sendable (String) -> Bool = { _ in false }) async throws -> CopyClaim? {
        guard let job = try await stores.jobs.claimNext(of: [.historyCopy], on: "m", as: holder, at: now, lease: lease,
                                                        takingOverFrom: isGone) else { return nil }
        return try await stores.historyCopies.begin(job, at: now)
    }
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ"), ana = try! Username("ana"), lb = try! Username("lb:tomo")

    @Test(arguments: Backend.allCases)
    func aCopyIsQueuedOnceAndClaimedByOneWorkerAtATime(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            #expect(try await copies.copy(of: Self.rj) == nil)
            #expect(try await Self.claimNext(stores, at: Self.now, lease: 60) == nil)
            let queued = try await copies.queue(Self.rj, at: Self.now)
            #expect(queued.state == .queued && queued.user.value == "RJ" && queued.queuedAt == Self.now)
            // Queued again while waiting: the same row, not a second one.
            #expect(try await copies.queue(try Username("rj"), at: Self.now.addingTimeInterval(5)).queuedAt == Self.now)
            _ = try await copies.queue(Self.ana, at: Self.now.addingTimeInterval(1))
            // The longest waiting first; a copying one is not claimed again while its lease lasts.
            let first = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(10), lease: 60))
            #expect(first.user == Self.rj && first.copy.state == .copying)
            let second = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(10), lease: 60))
            #expect(second.user == Self.ana)
            #expect(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(20), lease: 60) == nil)
            #expect(try await copies.claim(Self.rj, at: Self.now.addingTimeInterval(20), lease: 60) == nil)
            #expect(try await stores.jobs.jobs(of: .historyCopy, key: "rj").first?.leaseUntil == Self.now.addingTimeInterval(70))
        }
    }

    /// A copy stopped by the person, or failed, resumes from the archive's
    /// sync state when started again, so its counts and its expected total
    /// go on from where they stood ("12,462 copied" must not become
    /// "5,000 of 0"); only a finished copy's refresh starts counting anew.
    @Test(arguments: Backend.allCases)
    func aCopyStartedAgainKeepsItsProgressUnlessItHadFinished(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            func progressed(at seconds: TimeInterval) async throws -> CopyClaim {
                let claim = try #require(try await copies.claim(Self.rj, at: Self.now.addingTimeInterval(seconds), lease: 60))
                #expect(try await copies.progress(claim, pagesDone: 63, pagesTotal: 305, scrobbles: 12_462, scrobblesTotal: 60_862,
                                                  at: Self.now.addingTimeInterval(seconds + 1), lease: 60))
                return claim
            }
            func expectKept(_ because: String) async throws {
                let copy = try #require(try await copies.copy(of: Self.rj))
                #expect(copy.state == .queued, "\(because)")
                #expect(copy.scrobbles == 12_462 && copy.scrobblesTotal == 60_862 && copy.pagesDone == 63 && copy.pagesTotal == 305,
                        "\(because): \(copy.scrobbles) of \(copy.scrobblesTotal), page \(copy.pagesDone) of \(copy.pagesTotal)")
            }
            _ = try await progressed(at: 0)
            #expect(try await copies.stop(Self.rj, at: Self.now.addingTimeInterval(10)))
            _ = try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(20), evenIfStopped: true)
            try await expectKept("started again after a stop")

            let failing = try await progressed(at: 30)
            #expect(try await copies.finish(failing, failure: "Last.fm did not answer in time.", at: Self.now.addingTimeInterval(40)))
            _ = try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(50))
            try await expectKept("tried again after a failure")

            let finishing = try await progressed(at: 60)
            #expect(try await copies.finish(finishing, failure: nil, at: Self.now.addingTimeInterval(70)))
            let refresh = try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(80))
            #expect(refresh.state == .queued && refresh.scrobbles == 0 && refresh.scrobblesTotal == 0 && refresh.pagesDone == 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func aCopyWhoseWorkerStoppedIsTakenOverAndTheOldHolderCanNoLongerWrite(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            let dead = try #require(try await copies.claim(Self.lb, at: Self.now, lease: 60))
            #expect(try await copies.progress(dead, pagesDone: 3, pagesTotal: 10, scrobbles: 600, at: Self.now.addingTimeInterval(30), lease: 60))
            // The lease renewed to 90: not yet free at 89.
            #expect(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(89), lease: 60) == nil)
            let next = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(90), lease: 60))
            #expect(next.user == Self.lb && next.holder != dead.holder)
            // Progress so far is kept for the next worker to read.
            #expect(next.copy.pagesDone == 3 && next.copy.pagesTotal == 10 && next.copy.scrobbles == 600)
            #expect(try await copies.progress(dead, pagesDone: 4, pagesTotal: 10, scrobbles: 800, at: Self.now.addingTimeInterval(91), lease: 60) == false)
            #expect(try await copies.finish(dead, failure: nil, at: Self.now.addingTimeInterval(92)) == false)
            #expect(try await copies.copy(of: Self.lb)?.state == .copying)
            #expect(try await copies.finish(next, failure: nil, at: Self.now.addingTimeInterval(100)))
            let done = try #require(try await copies.copy(of: Self.lb))
            #expect(done.state == .done && done.updatedAt == Self.now.addingTimeInterval(100))
        }
    }

    @Test(arguments: Backend.allCases)
    func aFailedOrDoneCopyIsQueuedAgainToRefresh(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            let claim = try #require(try await copies.claim(Self.rj, at: Self.now, lease: 60))
            #expect(try await copies.finish(claim, failure: "Last.fm says this user does not exist.", at: Self.now.addingTimeInterval(1)))
            let failed = try #require(try await copies.copy(of: Self.rj))
            #expect(failed.state == .failed && failed.reason == "Last.fm says this user does not exist.")
            // A failed copy is not claimed by a worker looking for work...
            #expect(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(2), lease: 60) == nil)
            // ...until it is asked for again: queued afresh, its reason and figures cleared.
            let again = try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(3))
            #expect(again.state == .queued && again.reason == nil && again.pagesDone == 0)
            let retry = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(4), lease: 60))
            #expect(try await copies.finish(retry, failure: nil, at: Self.now.addingTimeInterval(5)))
            // `claim` of a done copy queues it and claims it at once (a terminal sync).
            let refresh = try #require(try await copies.claim(Self.rj, at: Self.now.addingTimeInterval(6), lease: 60))
            #expect(refresh.copy.state == .copying && refresh.copy.queuedAt == Self.now.addingTimeInterval(6))
        }
    }

    /// A copy whose holder is known to have stopped (a killed sync on this
    /// machine) is taken over at once; one whose holder may still run is not.
    @Test(arguments: Backend.allCases)
    func aCopyHeldByAStoppedWorkerIsTakenOverAtOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            let killed = try #require(try await copies.claim(Self.rj, as: "here/41/a", at: Self.now, lease: 600, takingOverFrom: { _ in false }))
            #expect(try await copies.claim(Self.rj, as: "here/42/b", at: Self.now.addingTimeInterval(1), lease: 600,
                                           takingOverFrom: { $0 == "here/7/z" }) == nil)
            let next = try #require(try await copies.claim(Self.rj, as: "here/42/b", at: Self.now.addingTimeInterval(2), lease: 600,
                                                           takingOverFrom: { $0 == "here/41/a" }))
            #expect(next.holder == "here/42/b")
            #expect(try await copies.progress(killed, pagesDone: 1, pagesTotal: 2, scrobbles: 1, at: Self.now.addingTimeInterval(3), lease: 600) == false)
            #expect(try await copies.finish(next, failure: nil, at: Self.now.addingTimeInterval(4)))
        }
    }

    /// Ten workers ask at once for one waiting copy: exactly one gets it.
    @Test(arguments: Backend.allCases)
    func workersAskingAtOnceTakeACopyOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            _ = try await copies.queue(Self.ana, at: Self.now)
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<10 {
                    group.addTask {
                        n % 2 == 0 ? try await Self.claimNext(stores, at: Self.now, lease: 60) != nil
                            : try await copies.claim(Self.ana, at: Self.now, lease: 60) != nil
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(taken == 1)
        }
    }

    /// The person stops their copy: its worker's next renewal fails, a view
    /// does not start it again, and only their own request does.
    @Test(arguments: Backend.allCases)
    func aStoppedCopyStaysStoppedUntilThePersonAsksAgain(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            #expect(try await copies.stop(Self.rj, at: Self.now) == false)
            let claim = try #require(try await copies.claim(Self.rj, at: Self.now, lease: 60))
            #expect(try await copies.stop(Self.rj, at: Self.now.addingTimeInterval(1)))
            #expect(try await copies.progress(claim, pagesDone: 1, pagesTotal: 9, scrobbles: 200, at: Self.now.addingTimeInterval(2), lease: 60) == false)
            #expect(try await copies.finish(claim, failure: nil, at: Self.now.addingTimeInterval(3)) == false)
            let stopped = try #require(try await copies.copy(of: Self.rj))
            #expect(stopped.state == .stopped && stopped.doneAt == nil && !stopped.isUnfinished)
            #expect(try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(4)).state == .stopped)
            #expect(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(5), lease: 60) == nil)
            #expect(try await copies.unfinished().isEmpty)
            #expect(try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(6), evenIfStopped: true).state == .queued)
            #expect(try await copies.unfinished().map(\.user) == [Self.rj])
            #expect(try await copies.counts() == [.queued: 1])
        }
    }

    /// A worker stopping with its server puts its copy back where it was in
    /// the queue, with its figures; the total said once is kept by later
    /// pages that do not say it, and a finished copy remembers when.
    @Test(arguments: Backend.allCases)
    func aReleasedCopyKeepsItsPlaceAndAFinishedOneRemembersWhen(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            _ = try await copies.queue(Self.rj, at: Self.now)
            _ = try await copies.queue(Self.ana, at: Self.now.addingTimeInterval(1))
            let claim = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(2), lease: 60))
            #expect(try await copies.progress(claim, pagesDone: 1, pagesTotal: 3, scrobbles: 200, scrobblesTotal: 512,
                                              at: Self.now.addingTimeInterval(3), lease: 60))
            #expect(try await copies.progress(claim, pagesDone: 2, pagesTotal: 3, scrobbles: 400, at: Self.now.addingTimeInterval(4), lease: 60))
            #expect(try await copies.release(claim, at: Self.now.addingTimeInterval(5)))
            #expect(try await copies.release(claim, at: Self.now.addingTimeInterval(5)) == false)
            #expect(try await copies.unfinished().map(\.user) == [Self.rj, Self.ana])
            let resumed = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(6), lease: 60))
            #expect(resumed.user == Self.rj && resumed.copy.scrobbles == 400 && resumed.copy.scrobblesTotal == 512 && resumed.copy.doneAt == nil)
            #expect(try await copies.finish(resumed, failure: nil, at: Self.now.addingTimeInterval(7)))
            let refreshed = try await copies.queue(Self.rj, at: Self.now.addingTimeInterval(8))
            #expect(refreshed.doneAt == Self.now.addingTimeInterval(7) && refreshed.scrobblesTotal == 0)
            let failing = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(9), lease: 60))
            #expect(failing.user == Self.ana)
            let again = try #require(try await Self.claimNext(stores, at: Self.now.addingTimeInterval(9), lease: 60))
            #expect(try await copies.finish(again, failure: "Last.fm is down.", at: Self.now.addingTimeInterval(10)))
            #expect(try await copies.copy(of: Self.rj)?.doneAt == Self.now.addingTimeInterval(7))
            #expect(try await copies.counts() == [.failed: 1, .copying: 1])
        }
    }

    /// After a crash the next worker takes over a copy whose holder is gone
    /// at once, without waiting out the lease.
    @Test(arguments: Backend.allCases)
    func theNextWorkerTakesOverACopyWhoseHolderIsGone(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            _ = try #require(try await copies.claim(Self.lb, as: "here/41/a", at: Self.now, lease: 600, takingOverFrom: { _ in false }))
            #expect(try await Self.claimNext(stores, as: "here/42/b", at: Self.now.addingTimeInterval(1), lease: 600,
                                               takingOverFrom: { $0 == "here/7/z" }) == nil)
            let next = try #require(try await Self.claimNext(stores, as: "here/42/b", at: Self.now.addingTimeInterval(2), lease: 600,
                                                               takingOverFrom: { $0 == "here/41/a" }))
            #expect(next.user == Self.lb && next.holder == "here/42/b")
        }
    }

    /// Once a day, people's own histories are copied again for what is
    /// new, without a view; friends' only when viewed.
    @Test(arguments: Backend.allCases)
    func ownHistoriesFinishedADayAgoAreQueuedAgain(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let copies = stores.historyCopies
            try await stores.lists.add(Self.rj)
            try await stores.lists.add(Self.ana)
            try await stores.lists.setMe(Self.rj)
            for user in [Self.rj, Self.ana] {
                let claim = try #require(try await copies.claim(user, at: Self.now, lease: 60))
                #expect(try await copies.finish(claim, failure: nil, at: Self.now))
            }
            #expect(try await copies.refreshOwnHistories(doneBefore: Self.now, at: Self.now.addingTimeInterval(10)) == 0)
            let later = Self.now.addingTimeInterval(86_401)
            #expect(try await copies.refreshOwnHistories(doneBefore: later.addingTimeInterval(-86_400), at: later) == 1)
            #expect(try await copies.copy(of: Self.rj)?.state == .queued)
            #expect(try await copies.copy(of: Self.rj)?.doneAt == Self.now)
            #expect(try await copies.copy(of: Self.ana)?.state == .done)
        }
    }
}
