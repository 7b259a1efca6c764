import Foundation
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The forwarding outbox's contract, against SQLite and PostgreSQL alike.
@Suite struct ForwardingOutboxContractTests {
    typealias Backend = StoreContractTests.Backend

    static func withOutbox(_ backend: Backend, _ body: @Sendable (any ForwardingOutbox, any AccountStore) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let database = try ArchiveDatabase()
            try await body(SQLiteForwardingOutbox(database), SQLiteAccountStore(database))
        case .postgres:
            try await StoreContractTests.withFreshPostgres { url in
                try await PostgresDatabase.with(url: url) { database in
                    try await body(PostgresForwardingOutbox(database), PostgresAccountStore(database))
                }
            }
        }
    }

    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func listens(_ count: Int, from start: Int64 = 1_749_990_000) -> [ListenToForward] {
        (0..<count).map { (i: Int) -> ListenToForward in
            let album: String = i % 2 == 0 ? "Album" : ""
            let mbid: String? = i == 0 ? "0a1b2c3d-0000-4000-8000-000000000001" : nil
            let duration: Int64? = i % 2 == 0 ? 180 : nil
            let scrobble = Scrobble(instant: start + Int64(i) * 200, artist: "Artist \(i % 3)", album: album, track: "Track \(i)", albumMBID: mbid)
            return ListenToForward(scrobble: scrobble, duration: duration)
        }
    }

    @Test(arguments: Backend.allCases)
    func choicesAreKeptPerOwnerWithTheAccountsSession(_ backend: Backend) async throws {
        try await Self.withOutbox(backend) { outbox, accounts in
            #expect(try await outbox.choice(of: .household) == ForwardingChoice())
            let (account, _) = try await accounts.signedIn(try Username("RJ"), lastFMSessionKey: "session-rj", at: Self.now)
            let owner = ListOwner.account(account.id)
            try await outbox.setForwardsToLastFM(true, for: owner, at: Self.now)
            try await outbox.setListenBrainz(token: "lb-token", user: "rj_lb", for: owner, at: Self.now)
            let choice = try await outbox.choice(of: owner)
            #expect(choice.toLastFM && choice.listenBrainzToken == "lb-token" && choice.listenBrainzUser == "rj_lb")
            #expect(choice.lastFMSession?.name == "RJ" && choice.lastFMSession?.key == "session-rj")
            #expect(choice.targets == [.lastFM, .listenBrainz])
            // The household has no Last.fm session: asking for Last.fm alone forwards nowhere.
            try await outbox.setForwardsToLastFM(true, for: .household, at: Self.now)
            #expect(try await outbox.choice(of: .household).targets.isEmpty)
            try await outbox.setListenBrainz(token: nil, user: "ignored", for: owner, at: Self.now)
            let cleared = try await outbox.choice(of: owner)
            #expect(cleared.listenBrainzToken == nil && cleared.listenBrainzUser == nil && cleared.toLastFM)
        }
    }

    static func claim(_ jobs: any JobQueue, as holder: String = "m/1/w", at now: Date = now) async throws -> JobClaim {
        try #require(try await jobs.claimNext(of: [.forwarding], on: "m", as: holder, at: now, lease: 60, takingOverFrom: { _ in false }))
    }

    /// Enqueued once per service, with one job per owner and service in
    /// the same transaction (its person the owner's name key, the
    /// household's ""); a new listen brings a job waiting out a backoff
    /// forward.
    @Test(arguments: Backend.allCases)
    func enqueueingQueuesOneJobPerOwnerAndService(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let (outbox, jobs) = (stores.outbox, stores.jobs)
            let listens = Self.listens(7)
            #expect(try await outbox.enqueue(listens, of: .household, to: [.listenBrainz], at: Self.now) == 7)
            // A player sending the same listens again adds nothing.
            #expect(try await outbox.enqueue(Array(listens.reversed()), of: .household, to: [.listenBrainz], at: Self.now) == 0)
            #expect(try await outbox.nextDue() == Self.now)
            let household = try await jobs.jobs(of: .forwarding, key: "0/2")
            #expect(household.count == 1 && household.first?.person == "" && household.first?.state == .queued)
            #expect(household.first?.notBefore == Self.now)

            let (account, _) = try await stores.accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: Self.now)
            try await outbox.enqueue(Self.listens(3), of: account.owner, to: [.lastFM, .listenBrainz], at: Self.now)
            for target in [ForwardingTarget.lastFM, .listenBrainz] {
                let key = ForwardingJob(owner: account.owner, target: target).key
                #expect(key == "\(account.id)/\(target.rawValue)" && ForwardingJob(key: key)?.owner == account.owner)
                let theirs = try await jobs.jobs(of: .forwarding, key: key)
                #expect(theirs.count == 1 && theirs.first?.person == "rj")
            }
            #expect(try await jobs.counts(of: .forwarding) == [.queued: 3])

            // The household's job waits out a backoff; a new listen brings it forward.
            let claim = try await Self.claim(jobs)
            let due = try await outbox.due(for: ForwardingJob(key: claim.job.key)!, at: Self.now, limit: 50)
            let later = Self.now.addingTimeInterval(300)
            let ending = try await outbox.record(OutboxMarks(waiting: [.init(ids: due.map(\.id), due: later, reason: "busy", uncertain: false)]),
                                                 for: ForwardingJob(key: claim.job.key)!, under: claim, at: Self.now)
            #expect(ending == ForwardingJob.ending(nextDue: later))
            #expect(try await jobs.job(claim.job.id)?.notBefore == later)
            try await outbox.enqueue(Self.listens(1, from: 1_749_000_000), of: ForwardingJob(key: claim.job.key)!.owner,
                                     to: [ForwardingJob(key: claim.job.key)!.target], at: Self.now.addingTimeInterval(10))
            let brought = try await jobs.job(claim.job.id)
            #expect(brought?.state == .queued && brought?.notBefore == Self.now.addingTimeInterval(10))
        }
    }

    /// A claimed job reads its owner's due listens in time order, batch by
    /// batch; its writes settle them, and the write that leaves nothing due
    /// ends the job with them: queued again for the earliest backoff, done
    /// once nothing waits. Failed ones put back in line queue the job again.
    @Test(arguments: Backend.allCases)
    func aJobSettlesItsListensAndEndsWithThem(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let (outbox, jobs) = (stores.outbox, stores.jobs)
            let listens = Self.listens(7)
            try await outbox.enqueue(listens, of: .household, to: [.listenBrainz], at: Self.now)
            let job = ForwardingJob(owner: .household, target: .listenBrainz)
            let claim = try await Self.claim(jobs)
            #expect(claim.job.key == job.key)
            let first = try await outbox.due(for: job, at: Self.now, limit: 5)
            #expect(first.map(\.listen) == Array(listens.prefix(5)) && first.allSatisfy { !$0.uncertain && $0.attempts == 0 })
            // More is due: the job goes on.
            #expect(try await outbox.record(OutboxMarks(sent: first.map(\.id)), for: job, under: claim, at: Self.now) == nil)
            let second = try await outbox.due(for: job, at: Self.now, limit: 5)
            #expect(second.map(\.listen) == Array(listens.suffix(2)))
            let marks = OutboxMarks(waiting: [.init(ids: [second[0].id], due: Self.now.addingTimeInterval(30), reason: "ListenBrainz is busy", uncertain: false)],
                                    failed: [.init(ids: [second[1].id], reason: "ListenBrainz refused the token", uncertain: false)])
            let ending = try await outbox.record(marks, for: job, under: claim, at: Self.now)
            #expect(ending == .retry(at: Self.now.addingTimeInterval(30), reason: "Listens wait to be sent again."))
            #expect(try await jobs.job(claim.job.id)?.state == .queued)
            var state = try #require(try await outbox.states(of: .household)[.listenBrainz])
            #expect(state.sent == 5 && state.waiting == 1 && state.failed == 1 && state.lastSent == Self.now)
            #expect(state.problem == "ListenBrainz refused the token")
            #expect(try await outbox.nextDue() == Self.now.addingTimeInterval(30))
            #expect(try await outbox.due(for: job, at: Self.now.addingTimeInterval(29), limit: 5).isEmpty)

            let retry = try await Self.claim(jobs, at: Self.now.addingTimeInterval(30))
            let again = try await outbox.due(for: job, at: Self.now.addingTimeInterval(30), limit: 5)
            #expect(again.map(\.listen) == [listens[5]] && again[0].attempts == 1)
            #expect(try await outbox.record(OutboxMarks(sent: [again[0].id]), for: job, under: retry, at: Self.now.addingTimeInterval(30)) == .done)
            #expect(try await jobs.job(retry.job.id)?.state == .done)

            #expect(try await outbox.retryFailed(of: .household, target: .listenBrainz, at: Self.now.addingTimeInterval(40)) == 1)
            state = try #require(try await outbox.states(of: .household)[.listenBrainz])
            #expect(state.failed == 0 && state.waiting == 1)
            let queued = try await jobs.jobs(of: .forwarding, key: job.key)
            #expect(queued.first?.state == .queued && queued.first?.notBefore == Self.now.addingTimeInterval(40))
            // Ended jobs of the same owner and service are kept no longer than the last.
            let third = try await Self.claim(jobs, at: Self.now.addingTimeInterval(40))
            let last = try await outbox.due(for: job, at: Self.now.addingTimeInterval(40), limit: 5)
            #expect(try await outbox.record(OutboxMarks(sent: last.map(\.id)), for: job, under: third, at: Self.now.addingTimeInterval(40)) == .done)
            #expect(try await jobs.jobs(of: .forwarding, key: job.key).map(\.id) == [third.job.id])
        }
    }

    /// RJ's `listens` queued for Last.fm, their job claimed as `holder`,
    /// and the ids of the listens due.
    static func rjsJob(_ stores: StoreContractTests.Stores, listens: Int, holder: String = "m/1/w") async throws
        -> (job: ForwardingJob, claim: JobClaim, ids: [Int64]) {
        let (account, _) = try await stores.accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: Self.now)
        try await stores.outbox.enqueue(Self.listens(listens), of: account.owner, to: [.lastFM], at: Self.now)
        let job = ForwardingJob(owner: account.owner, target: .lastFM)
        let claim = try await Self.claim(stores.jobs, as: holder)
        return (job, claim, try await stores.outbox.due(for: job, at: Self.now, limit: 50).map(\.id))
    }

    /// Listens being sent are uncertain until the outcome is written, so a
    /// sender that dies mid-send leaves them to be asked about; an outcome
    /// that says nothing of them (no send was tried) leaves them so.
    @Test(arguments: Backend.allCases)
    func listensBeingSentAreUncertainUntilTheOutcome(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let (outbox, jobs) = (stores.outbox, stores.jobs)
            let (job, claim, ids) = try await Self.rjsJob(stores, listens: 3, holder: "m/1/dead")
            #expect(try await outbox.record(OutboxMarks(sending: ids), for: job, under: claim, at: Self.now) == nil)
            // Its holder died mid-send: the job is taken over, the listens uncertain.
            let taken = try #require(try await jobs.claimNext(of: [.forwarding], on: "m", as: "m/2/w", at: Self.now, lease: 60,
                                                              takingOverFrom: { $0 == "m/1/dead" }))
            let found = try await outbox.due(for: job, at: Self.now, limit: 50)
            #expect(found.map(\.id) == ids && found.allSatisfy(\.uncertain))
            let later = Self.now.addingTimeInterval(60)
            _ = try await outbox.record(OutboxMarks(waiting: [.init(ids: ids, due: later, reason: "not set up", uncertain: nil)]),
                                        for: job, under: taken, at: Self.now)
            let kept = try await outbox.due(for: job, at: later, limit: 50)
            #expect(kept.allSatisfy { $0.uncertain && $0.attempts == 1 })
            let next = try await Self.claim(jobs, at: later)
            _ = try await outbox.record(OutboxMarks(waiting: [.init(ids: [ids[0]], due: later.addingTimeInterval(60), reason: "429", uncertain: false)]),
                                        for: job, under: next, at: later)
            #expect(try await outbox.due(for: job, at: later.addingTimeInterval(60), limit: 50).map(\.uncertain) == [false, true, true])
        }
    }

    /// A write under a job that was deleted (its owner's account erased)
    /// or taken over stores nothing.
    @Test(arguments: Backend.allCases)
    func aFencedWriteStoresNothing(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let (outbox, jobs) = (stores.outbox, stores.jobs)
            let (job, claim, ids) = try await Self.rjsJob(stores, listens: 2)
            #expect(try await jobs.cancel(of: try Username("RJ"), kinds: [.forwarding]) == 1)
            await #expect(throws: SourceError.self) {
                _ = try await outbox.record(OutboxMarks(sent: ids), for: job, under: claim, at: Self.now)
            }
            #expect(try await outbox.states(of: job.owner)[.lastFM]?.sent == 0)
        }
    }

    /// A listen that arrives while its owner's job runs is sent by that run,
    /// or, once the run has ended the job, queues a new one: never stranded.
    @Test(arguments: Backend.allCases)
    func aListenArrivingWhileTheJobRunsIsNeverStranded(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let (outbox, jobs) = (stores.outbox, stores.jobs)
            let job = ForwardingJob(owner: .household, target: .listenBrainz)
            try await outbox.enqueue(Self.listens(2), of: .household, to: [.listenBrainz], at: Self.now)
            let claim = try await Self.claim(jobs)
            let first = try await outbox.due(for: job, at: Self.now, limit: 50)
            try await outbox.enqueue(Self.listens(1, from: 1_749_999_000), of: .household, to: [.listenBrainz], at: Self.now)
            // The running job is left running, and its write sees the new listen.
            #expect(try await jobs.counts(of: .forwarding) == [.running: 1])
            #expect(try await outbox.record(OutboxMarks(sent: first.map(\.id)), for: job, under: claim, at: Self.now) == nil)
            let second = try await outbox.due(for: job, at: Self.now, limit: 50)
            #expect(second.count == 1)
            #expect(try await outbox.record(OutboxMarks(sent: second.map(\.id)), for: job, under: claim, at: Self.now) == .done)
            try await outbox.enqueue(Self.listens(1, from: 1_749_999_500), of: .household, to: [.listenBrainz], at: Self.now)
            #expect(try await jobs.counts(of: .forwarding) == [.done: 1, .queued: 1])
        }
    }
}
