import Foundation
import Stores
import Testing
import VinylogueCore

/// The one job queue, on both stores: queued once per kind and key,
/// claimed by one worker at a time, renewed, ended, retried later, taken
/// over from a holder that died or whose lease ran out, kept to its
/// machine, deleted with its person.
@Suite struct JobQueueContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ"), ana = try! Username("Ana")
    static let other = JobKind(rawValue: "other")

    static func at(_ seconds: TimeInterval) -> Date { now.addingTimeInterval(seconds) }

    @Test(arguments: Backend.allCases)
    func aJobIsQueuedOnceAndClaimedByOneWorkerAtATime(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs
            let first = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "{\"n\":1}", machine: nil, notBefore: nil, at: Self.now)
            let again = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "{\"n\":2}", machine: nil, notBefore: nil, at: Self.at(1))
            #expect(again == first && first.payload == "{\"n\":1}" && first.state == .queued && first.attempts == 0 && first.person == "rj")
            // Another kind with the same key is another job.
            let otherKind = try await jobs.enqueue(Self.other, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.at(2))
            #expect(otherKind.id != first.id)
            let claim = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "w1", at: Self.at(3), lease: 60,
                                                              takingOverFrom: { _ in false }))
            #expect(claim.job.id == first.id && claim.job.state == .running && claim.job.attempts == 1 && claim.holder == "w1")
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "w2", at: Self.at(4), lease: 60, takingOverFrom: { _ in false }) == nil)
            // While it runs, queueing it again gives the running one back.
            #expect(try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.at(5)).id == first.id)
            #expect(try await jobs.renew(claim, at: Self.at(50), lease: 60))
            // Renewed: not taken over at 70 (its first lease's end).
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "w2", at: Self.at(70), lease: 60, takingOverFrom: { _ in false }) == nil)
            #expect(try await jobs.end(claim, as: .done, at: Self.at(80)))
            #expect(try await jobs.end(claim, as: .done, at: Self.at(81)) == false)
            #expect(try await jobs.job(first.id)?.state == .done)
            // Once done, the same key may be queued anew.
            let next = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.at(90))
            #expect(next.id != first.id)
            #expect(try await jobs.jobs(of: .upload, key: "a").map(\.id) == [next.id, first.id])
            #expect(try await jobs.counts(of: .upload) == [.done: 1, .queued: 1])
        }
    }

    @Test(arguments: Backend.allCases)
    func aJobIsTakenOverFromADeadHolderOrAnEndedLeaseAndTheOldClaimIsVoid(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs
            let job = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.now)
            let first = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "m/1/a", at: Self.at(1), lease: 60,
                                                              takingOverFrom: { _ in false }))
            // Its holder's process ended: taken over at once.
            let second = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "m/2/b", at: Self.at(2), lease: 60,
                                                               takingOverFrom: { $0 == "m/1/a" }))
            #expect(second.job.id == job.id && second.job.attempts == 2)
            #expect(try await jobs.renew(first, at: Self.at(3), lease: 60) == false)
            #expect(try await jobs.end(first, as: .failed(reason: "x"), at: Self.at(3)) == false)
            // Its lease ran out: taken over by the next look after it.
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "m/3/c", at: Self.at(61), lease: 60, takingOverFrom: { _ in false }) == nil)
            let third = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "m/3/c", at: Self.at(62), lease: 60,
                                                              takingOverFrom: { _ in false }))
            #expect(third.job.id == job.id && third.job.attempts == 3)
            #expect(try await jobs.end(second, as: .done, at: Self.at(63)) == false)
            #expect(try await jobs.end(third, as: .done, at: Self.at(63)))
        }
    }

    @Test(arguments: Backend.allCases)
    func aRetryWaitsItsTimeAStopGivesItsTryBackAFailureEndsIt(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs
            let job = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: Self.at(10), at: Self.now)
            #expect(try await jobs.nextDue(of: [.upload], on: "m") == Self.at(10))
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(9), lease: 60, takingOverFrom: { _ in false }) == nil)
            let run1 = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(10), lease: 60, takingOverFrom: { _ in false }))
            // While it runs, the next look is when its lease ends.
            #expect(try await jobs.nextDue(of: [.upload], on: "m") == Self.at(70))
            #expect(try await jobs.end(run1, as: .retry(at: Self.at(100), reason: "Last.fm did not answer."), at: Self.at(20)))
            let waiting = try #require(try await jobs.job(job.id))
            #expect(waiting.state == .queued && waiting.reason == "Last.fm did not answer." && waiting.notBefore == Self.at(100) && waiting.attempts == 1)
            #expect(try await jobs.nextDue(of: [.upload], on: "m") == Self.at(100))
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(99), lease: 60, takingOverFrom: { _ in false }) == nil)
            let run2 = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(100), lease: 60, takingOverFrom: { _ in false }))
            #expect(run2.job.attempts == 2)
            #expect(try await jobs.end(run2, as: .stopped, at: Self.at(101)))
            #expect(try await jobs.job(job.id)?.attempts == 1)
            let run3 = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(102), lease: 60, takingOverFrom: { _ in false }))
            #expect(try await jobs.end(run3, as: .failed(reason: "The file is damaged."), at: Self.at(103)))
            let failed = try #require(try await jobs.job(job.id))
            #expect(failed.state == .failed && failed.reason == "The file is damaged." && failed.holder == nil)
            #expect(try await jobs.nextDue(of: [.upload], on: "m") == nil)
            #expect(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(1_000), lease: 60, takingOverFrom: { _ in false }) == nil)
            // Ended jobs are forgotten after their time.
            #expect(try await jobs.forget(endedBefore: Self.at(103)) == 0)
            #expect(try await jobs.forget(endedBefore: Self.at(104)) == 1)
            #expect(try await jobs.job(job.id) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aJobRunsOnlyWhereItMayAndOnlyForItsKinds(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs
            let here = try await jobs.enqueue(.upload, for: Self.rj, key: "here", payload: "", machine: "here", notBefore: nil, at: Self.now)
            let anywhere = try await jobs.enqueue(Self.other, for: Self.rj, key: "any", payload: "", machine: nil, notBefore: nil, at: Self.at(1))
            #expect(try await jobs.claimNext(of: [.upload], on: "there", as: "t", at: Self.at(2), lease: 60, takingOverFrom: { _ in false }) == nil)
            #expect(try await jobs.claimNext(of: [], on: "there", as: "t", at: Self.at(2), lease: 60, takingOverFrom: { _ in false }) == nil)
            let taken = try #require(try await jobs.claimNext(of: [.upload, Self.other], on: "there", as: "t", at: Self.at(2), lease: 60,
                                                              takingOverFrom: { _ in false }))
            #expect(taken.job.id == anywhere.id)
            let mine = try #require(try await jobs.claimNext(of: [.upload, Self.other], on: "here", as: "h", at: Self.at(2), lease: 60,
                                                             takingOverFrom: { _ in false }))
            #expect(mine.job.id == here.id)
        }
    }

    /// Deleting a person's jobs voids their claims: the fence of a running
    /// one stops its writes, and nothing of theirs is queued any more.
    @Test(arguments: Backend.allCases)
    func cancellingAPersonsJobsVoidsTheirClaimsAndFences(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs, archive = stores.scrobbles
            _ = try await jobs.enqueue(.upload, for: Self.rj, key: "a", payload: "", machine: nil, notBefore: nil, at: Self.now)
            _ = try await jobs.enqueue(Self.other, for: Self.rj, key: "b", payload: "", machine: nil, notBefore: nil, at: Self.now)
            let anas = try await jobs.enqueue(.upload, for: Self.ana, key: "c", payload: "", machine: nil, notBefore: nil, at: Self.now)
            let claim = try #require(try await jobs.claimNext(of: [.upload], on: "m", as: "w", at: Self.at(1), lease: 60, takingOverFrom: { _ in false }))
            #expect(claim.job.person == "rj")
            let scrobble = Scrobble(instant: 1_600_000_000, artist: "Low", album: "Double Negative", track: "Quorum")
            #expect(try await archive.store([(scrobble, .lastFMExport)], of: Self.rj, fence: claim.fence).inserted == 1)
            #expect(try await jobs.cancel(of: try Username("rj"), kinds: [Self.other]) == 1)
            #expect(try await jobs.cancel(of: Self.rj, kinds: nil) == 1)
            await #expect(throws: SourceError.self) {
                try await archive.store([(Scrobble(instant: 1_600_000_600, artist: "Low", album: "Double Negative", track: "Tempest"),
                                          .lastFMExport)], of: Self.rj, fence: claim.fence)
            }
            #expect(try await archive.scrobbleCount(of: Self.rj) == 1)
            #expect(try await jobs.renew(claim, at: Self.at(2), lease: 60) == false)
            #expect(try await jobs.job(anas.id)?.state == .queued)
        }
    }

    /// Workers racing for twenty jobs claim each exactly once.
    @Test(arguments: Backend.allCases)
    func racingWorkersClaimEachJobOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.jobs
            for n in 0..<20 {
                _ = try await jobs.enqueue(.upload, for: Self.rj, key: "job-\(n)", payload: "", machine: nil, notBefore: nil, at: Self.now)
            }
            let ids = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var mine: [Int64] = []
                        while let claim = try await jobs.claimNext(of: [.upload], on: "m", as: "w\(worker)", at: Self.at(1), lease: 600,
                                                                   takingOverFrom: { _ in false }) {
                            mine.append(claim.job.id)
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(ids.count == 20 && Set(ids).count == 20)
        }
    }

    @Test func retriesDoubleUpToTheLongestWaitForTheirTries() {
        let schedule = RetrySchedule(first: 60, longest: 6 * 3600, tries: 10)
        #expect(schedule.wait(after: 1) == 60)
        #expect(schedule.wait(after: 2) == 120)
        #expect(schedule.wait(after: 5) == 960)
        #expect(schedule.wait(after: 9) == 15_360)
        #expect(schedule.wait(after: 10) == nil)
        #expect(RetrySchedule(first: 60, longest: 21_600, tries: 20).wait(after: 12) == 21_600)
    }
}
