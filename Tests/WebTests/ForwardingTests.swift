import AsyncHTTPClient
import Foundation
import ListenIngest
import HTTPServing
import LastFM
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore
import Web
import Workers

/// The forwarding outbox's sender against the fake Last.fm over real HTTP:
/// every listen arrives once, in order, in batches of 50; failures wait,
/// back off or fail with a reason; a send whose fate is unknown is checked
/// against the account's recent tracks, never sent twice.
@Suite struct ForwardingTests {
    struct Setup: Sendable {
        let fake: FakeLastFM
        let clock: TestClock
        let outbox: SQLiteForwardingOutbox
        let jobs: SQLiteJobQueue
        let forwarding: ListenForwarding
        /// The job runner with the forwarding handler, as the server builds it.
        let runner: JobRunner
        let owner: ListOwner
        let database: ArchiveDatabase
        /// A runner on the same queue whose Last.fm client gives up after `timeout`.
        let sender: @Sendable (Duration) -> JobRunner

        func received() async -> [Scrobble] { await fake.scrobbles()["RJ"] ?? [] }

        func scrobbleRequests() async -> Int { await fake.requests().filter { $0.method == "track.scrobble" }.count }

        func state() async throws -> ForwardingState { try await outbox.states(of: owner)[.lastFM] ?? ForwardingState() }

        /// Runs the forwarding jobs due now; returns how many runs there were.
        @discardableResult
        func sendDue(with runner: JobRunner? = nil) async -> Int { await ForwardingTests.sendDue(runner ?? self.runner) }
    }

    /// Runs `runner`'s due jobs one after another until none is due; returns how many ran.
    static func sendDue(_ runner: JobRunner) async -> Int {
        var runs = 0
        while await runner.runNext() { runs += 1 }
        return runs
    }

    /// RJ signed in here (its session key the fake's), forwarding to Last.fm.
    static func withForwarding(_ body: @Sendable (Setup) async throws -> Void) async throws {
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        let http = LastFMTransport.makeHTTPClient()
        do {
            try await FakeLastFMServer.withRunning(fake) { url in
                var configuration = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 100, maxAttempts: 1, timeout: .seconds(10))
                configuration.apiSecret = "test-secret"
                let client = LastFMClient(configuration: configuration, transport: .live(http), clock: clock.wallClock)
                let database = try ArchiveDatabase()
                let key = await fake.session(for: "rj")
                let (account, _) = try await SQLiteAccountStore(database).signedIn(try Username("RJ"), lastFMSessionKey: key, at: clock.now)
                let owner = ListOwner.account(account.id)
                let outbox = SQLiteForwardingOutbox(database)
                let jobs = SQLiteJobQueue(database)
                try await outbox.setForwardsToLastFM(true, for: owner, at: clock.now)
                let upstreams: [any ForwardingUpstream] = [LastFMForwarding(client: client)]
                let forwarding = ListenForwarding(outbox: outbox, upstreams: upstreams, clock: clock.wallClock, wakeup: Wakeup())
                let runner = Self.runner(jobs, outbox, upstreams, clock)
                let patient = configuration
                let sender: @Sendable (Duration) -> JobRunner = { timeout in
                    var impatient = patient
                    impatient.timeout = timeout
                    let client = LastFMClient(configuration: impatient, transport: .live(http), clock: clock.wallClock)
                    return Self.runner(jobs, outbox, [LastFMForwarding(client: client)], clock)
                }
                try await body(Setup(fake: fake, clock: clock, outbox: outbox, jobs: jobs, forwarding: forwarding, runner: runner, owner: owner,
                                     database: database, sender: sender))
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// A job runner with only the forwarding handler.
    static func runner(_ jobs: any JobQueue, _ outbox: any ForwardingOutbox, _ upstreams: [any ForwardingUpstream], _ clock: TestClock) -> JobRunner {
        JobRunner(queue: jobs, handlers: [ListenForwarder(outbox: outbox, upstreams: upstreams, clock: clock.wallClock)], clock: clock.wallClock,
                  wakeup: Wakeup())
    }

    /// `count` listens a few minutes apart, the last an hour before now;
    /// every other one names its album's artist, and with `releaseGroups`
    /// every third its release group (which Last.fm takes no field for).
    static func listens(_ count: Int, before now: Date, spacing: Int64 = 240, releaseGroups: Bool = false) -> [ListenToForward] {
        let last = Int64(now.timeIntervalSince1970) - 3600
        return (0..<count).map { i in
            let instant = last - Int64(count - 1 - i) * spacing
            return ListenToForward(scrobble: Scrobble(instant: instant, artist: "Forwarded Artist \(i % 4)", album: "Forwarded Album",
                                                      track: "Track \(i)", albumArtist: i % 2 == 0 ? "Various Artists" : nil,
                                                      releaseGroupMBID: releaseGroups && i % 3 == 0 ? "5e0e1e5a-3a0b-4e5c-8b1d-2c3d4e5f6a7b" : nil), duration: 200)
        }
    }

    @Test func everyListenReachesLastFMOnceInBatchesOf50() async throws {
        try await Self.withForwarding { setup in
            let listens = Self.listens(120, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            // The same listens again (a player retrying) change nothing.
            try await setup.forwarding.enqueue(Array(listens.prefix(10)), of: setup.owner)
            #expect(await setup.sendDue() == 1)
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(await setup.scrobbleRequests() == 3)
            let state = try await setup.state()
            #expect(state.sent == 120 && state.waiting == 0 && state.failed == 0 && state.lastSent == setup.clock.now)
            #expect(await setup.sendDue() == 0)
        }
    }

    /// Last.fm's 429-style refusal (error 29): nothing arrived; the listens
    /// wait a minute with the reason, then go.
    @Test func aRateLimitWaitsThenSends() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.apiError(code: 29, status: 429), method: "track.scrobble", times: 1))
            let listens = Self.listens(3, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.sendDue()
            var state = try await setup.state()
            #expect(state.waiting == 3 && state.sent == 0)
            #expect(state.problem == SourceError.rateLimited.message)
            setup.clock.advance(days: 59.0 / 86400)
            #expect(await setup.sendDue() == 0)
            setup.clock.advance(days: 2.0 / 86400)
            #expect(await setup.sendDue() == 1)
            #expect(await setup.received() == listens.map(\.scrobble))
            state = try await setup.state()
            #expect(state.sent == 3 && state.problem == nil)
        }
    }

    /// A 5xx from a proxy: Last.fm may or may not have the listens. They are
    /// looked for in the account's recent tracks before they are sent again,
    /// and sent (once) only because they are not there.
    @Test func aServerErrorIsCheckedThenSentOnce() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.httpStatus(502), method: "track.scrobble", times: 1))
            let listens = Self.listens(4, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.sendDue()
            #expect(await setup.received().isEmpty)
            #expect(try await setup.state().waiting == 4)
            setup.clock.advance(days: 1.0 / 24)
            await setup.sendDue()
            #expect(await setup.received() == listens.map(\.scrobble))
            let asked = await setup.fake.requests().map(\.method)
            #expect(asked == ["track.scrobble", "user.getrecenttracks", "track.scrobble"])
        }
    }

    /// An answer that never came in time: Last.fm had taken the listens.
    /// The next round finds them in the recent tracks and sends nothing.
    @Test func aTimedOutSendThatArrivedIsNotSentAgain() async throws {
        try await Self.withForwarding { setup in
            // Last.fm takes the batch and holds its answer past the sender's patience.
            await setup.fake.inject(.init(.held, method: "track.scrobble", times: 1))
            let listens = Self.listens(5, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.sendDue(with: setup.sender(.milliseconds(200)))
            await setup.fake.releaseHeld()
            var state = try await setup.state()
            #expect(state.waiting == 5 && state.problem == SourceError.timeout.message)
            #expect(await setup.received().count == 5)
            setup.clock.advance(days: 1.0 / 24)
            await setup.sendDue()
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(await setup.scrobbleRequests() == 1)
            state = try await setup.state()
            #expect(state.sent == 5 && state.waiting == 0)
        }
    }

    /// A sender killed after Last.fm took a batch but before the outbox
    /// heard: its job is taken over at once (its process has ended), the
    /// batch is found uncertain and then in the recent tracks, and only
    /// what never went is sent.
    @Test func aRestartAfterAKilledSendSendsOnlyWhatNeverWent() async throws {
        try await Self.withForwarding { setup in
            let listens = Self.listens(70, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            // What the killed sender did: claimed the job, marked 50 as
            // being sent, delivered them, died.
            let dead = "\(JobHolder.machine())/4194999/killed"
            let claim = try #require(try await setup.jobs.claimNext(of: [.forwarding], on: JobHolder.machine(), as: dead, at: setup.clock.now,
                                                                    lease: 120, takingOverFrom: { _ in false }))
            let job = try #require(ForwardingJob(key: claim.job.key))
            let batch = try await setup.outbox.due(for: job, at: setup.clock.now, limit: 50)
            _ = try await setup.outbox.record(OutboxMarks(sending: batch.map(\.id)), for: job, under: claim, at: setup.clock.now)
            let upstream = try #require(setup.forwarding.upstreams.first)
            #expect(await upstream.send(batch, as: try await setup.outbox.choice(of: setup.owner)) == .delivered(ignored: [:]))
            #expect(await setup.sendDue() == 1)
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(await setup.scrobbleRequests() == 2)
            #expect(try await setup.state().sent == 70)
            #expect(try await setup.jobs.job(claim.job.id)?.state == .done)
        }
    }

    /// A session Last.fm no longer accepts fails the listens with a sentence
    /// saying what to do; once fixed, "try again" sends them.
    @Test func aRefusedSessionFailsWithWhatToDoAndCanBeTriedAgain() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.apiError(code: 9, status: 403), method: "track.scrobble", times: 1))
            let listens = Self.listens(3, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.sendDue()
            let state = try await setup.state()
            #expect(state.failed == 3 && state.problem?.contains("sign in with Last.fm again") == true)
            #expect(await setup.sendDue() == 0)
            #expect(try await setup.outbox.retryFailed(of: setup.owner, target: .lastFM, at: setup.clock.now) == 3)
            await setup.sendDue()
            #expect(await setup.received() == listens.map(\.scrobble))
        }
    }

    /// Last.fm ignores a listen older than 14 days: that one fails with its
    /// reason; the rest of the batch is sent.
    @Test func anIgnoredListenFailsWithLastFMsReason() async throws {
        try await Self.withForwarding { setup in
            var listens = Self.listens(3, before: setup.clock.now)
            let old = ListenToForward(scrobble: Scrobble(instant: Int64(setup.clock.now.timeIntervalSince1970) - 20 * 86400,
                                                         artist: "Old Artist", album: "", track: "Old Track"), duration: nil)
            listens.insert(old, at: 0)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.sendDue()
            let state = try await setup.state()
            #expect(state.sent == 3 && state.failed == 1 && state.problem == "Last.fm takes no scrobbles this old")
            #expect(await setup.received() == listens.dropFirst().map(\.scrobble))
        }
    }

    /// Temporary failures back off and, after 20 tries, fail with the last reason.
    @Test func temporaryFailuresBackOffThenGiveUp() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.apiError(code: 11, status: 503), method: "track.scrobble"))
            try await setup.forwarding.enqueue(Self.listens(1, before: setup.clock.now), of: setup.owner)
            var waits: [TimeInterval] = []
            for _ in 0..<30 {
                let before = setup.clock.now
                await setup.sendDue()
                guard let due = try await setup.outbox.nextDue() else { break }
                #expect(try await setup.jobs.nextDue(of: [.forwarding], on: JobHolder.machine()) == due)
                waits.append(due.timeIntervalSince(before))
                setup.clock.advance(days: due.timeIntervalSince(before) / 86400)
            }
            let state = try await setup.state()
            #expect(state.failed == 1 && state.problem?.hasPrefix("Gave up after 20 tries: Last.fm is temporarily unavailable") == true)
            #expect(waits.count == 19)
            #expect(waits.first.map { $0 >= 5 && $0 <= 6 } == true)
            #expect(waits.last.map { $0 >= 3600 && $0 <= 4320 } == true)
            #expect(zip(waits, waits.dropFirst()).allSatisfy { $0.0 <= $0.1 * 1.2 + 0.001 })
            #expect(await setup.received().isEmpty)
        }
    }
}
