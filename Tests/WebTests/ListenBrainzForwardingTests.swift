import AsyncHTTPClient
import Foundation
import ListenIngest
import HTTPServing
import ListenBrainz
import ListenBrainzTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore
import Web
import Workers

/// The forwarding outbox's sender against the fake ListenBrainz over real
/// HTTP: every listen kept once, in batches of 500; a 429's `Reset-In`
/// honoured; a lost answer checked against the user's listens, never sent
/// twice; a refused token fails with what to do.
@Suite struct ListenBrainzForwardingTests {
    struct Setup: Sendable {
        let fake: FakeListenBrainz
        let clock: TestClock
        let outbox: SQLiteForwardingOutbox
        let forwarding: ListenForwarding
        /// The job runner with the forwarding handler.
        let runner: JobRunner
        /// A runner on the same queue whose client gives up after `timeout`.
        let sender: @Sendable (Duration) -> JobRunner

        /// Runs the forwarding jobs due now; returns how many runs there were.
        @discardableResult
        func sendDue(with runner: JobRunner? = nil) async -> Int { await ForwardingTests.sendDue(runner ?? self.runner) }

        func state() async throws -> ForwardingState { try await outbox.states(of: .household)[.listenBrainz] ?? ForwardingState() }
        func submitted() async -> [LoggedRequestSummary] {
            await fake.requests().map { LoggedRequestSummary(endpoint: $0.endpoint, status: $0.status) }
        }
    }

    struct LoggedRequestSummary: Equatable {
        let endpoint: String
        let status: Int?
    }

    /// The household forwards to ListenBrainz as `rob` (the fake's `test-token`).
    static func withForwarding(token: String = "test-token", _ body: @Sendable (Setup) async throws -> Void) async throws {
        let clock = TestClock(july2023)
        let fake = FakeListenBrainz(clock: clock.wallClock)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await FakeListenBrainzServer.withRunning(fake) { root in
                // Waits the client would make (a spent rate-limit window) pass at once:
                // the test moves the outbox's clock instead.
                let pacing = ListenBrainzPacing(now: { ContinuousClock.now }, sleep: { _ in })
                let client = ListenBrainzClient(configuration: .init(apiRoot: root, timeout: .seconds(10), attempts: 1), http: http, pacing: pacing)
                let database = try ArchiveDatabase()
                let outbox = SQLiteForwardingOutbox(database)
                try await outbox.setListenBrainz(token: token, user: "rob", for: .household, at: clock.now)
                let jobs = SQLiteJobQueue(database)
                let upstreams: [any ForwardingUpstream] = [ListenBrainzForwarding(client: client)]
                let forwarding = ListenForwarding(outbox: outbox, upstreams: upstreams, clock: clock.wallClock, wakeup: Wakeup())
                let sender: @Sendable (Duration) -> JobRunner = { timeout in
                    let impatient = ListenBrainzClient(configuration: .init(apiRoot: root, timeout: timeout, attempts: 1), http: http, pacing: pacing)
                    return ForwardingTests.runner(jobs, outbox, [ListenBrainzForwarding(client: impatient)], clock)
                }
                try await body(Setup(fake: fake, clock: clock, outbox: outbox, forwarding: forwarding,
                                     runner: ForwardingTests.runner(jobs, outbox, upstreams, clock), sender: sender))
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    static func listens(_ count: Int, before now: Date) -> [ListenToForward] {
        ForwardingTests.listens(count, before: now, spacing: 60, releaseGroups: true)
    }

    @Test func everyListenIsKeptOnceInBatchesOf500() async throws {
        try await Self.withForwarding { setup in
            let listens = Self.listens(600, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: .household)
            #expect(await setup.sendDue() == 1)
            let received = await setup.fake.received()
            #expect(received.listensReceived == 600 && received.listens.count == 600 && received.submissions == 2)
            #expect(received.listens.map(\.listen.track) == listens.map(\.scrobble.track))
            #expect(received.listens.map(\.listen.releaseArtist) == listens.map(\.scrobble.albumArtist), "the album's artist goes with each")
            #expect(received.listens.map(\.listen.releaseGroupMBID) == listens.map(\.scrobble.releaseGroupMBID))
            #expect(received.listens.allSatisfy { $0.user == "rob" && $0.listen.artist.hasPrefix("Forwarded Artist") })
            #expect(try await setup.state().sent == 600)
        }
    }

    @Test func aRateLimitWaitsAsLongAsListenBrainzSays() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.rateLimited(resetIn: 30), endpoint: "submit-listens", times: 1))
            let listens = Self.listens(3, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: .household)
            await setup.sendDue()
            #expect(try await setup.outbox.nextDue() == setup.clock.now.addingTimeInterval(30))
            #expect(try await setup.state().problem == "ListenBrainz is rate limiting requests (it asked to wait 30 s).")
            setup.clock.advance(days: 30.0 / 86400)
            await setup.sendDue()
            #expect(await setup.fake.received().listensReceived == 3)
            // A 429 stored nothing, so nothing was checked before sending again.
            #expect(await setup.fake.requests().map(\.endpoint) == ["submit-listens", "submit-listens"])
        }
    }

    /// ListenBrainz kept the listens and its answer never came in time:
    /// they are found among rob's listens and not sent again.
    @Test func aLostAnswerIsCheckedAndNotSentAgain() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.held, endpoint: "submit-listens", times: 1))
            let listens = Self.listens(4, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: .household)
            await setup.sendDue(with: setup.sender(.milliseconds(200)))
            await setup.fake.releaseHeld()
            #expect(try await setup.state().waiting == 4)
            setup.clock.advance(days: 1.0 / 24)
            await setup.sendDue()
            let received = await setup.fake.received()
            #expect(received.listensReceived == 4 && received.submissions == 1)
            #expect(try await setup.state().sent == 4)
            #expect(await setup.fake.requests().map(\.endpoint) == ["submit-listens", "listens"])
        }
    }

    /// A 5xx from a proxy stored nothing: the listens are looked for, not
    /// found, and sent once.
    @Test func aServerErrorIsCheckedThenSentOnce() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.httpStatus(502), endpoint: "submit-listens", times: 1))
            try await setup.forwarding.enqueue(Self.listens(2, before: setup.clock.now), of: .household)
            await setup.sendDue()
            setup.clock.advance(days: 1.0 / 24)
            await setup.sendDue()
            #expect(await setup.fake.received().listensReceived == 2)
            #expect(await setup.fake.requests().map(\.endpoint) == ["submit-listens", "listens", "submit-listens"])
        }
    }

    @Test func aRefusedTokenFailsWithWhatToDo() async throws {
        try await Self.withForwarding(token: "revoked-token") { setup in
            try await setup.forwarding.enqueue(Self.listens(2, before: setup.clock.now), of: .household)
            await setup.sendDue()
            let state = try await setup.state()
            #expect(state.failed == 2 && state.problem == ListenBrainzForwarding.enterANewToken)
            #expect(await setup.fake.received().listensReceived == 0)
        }
    }
}
