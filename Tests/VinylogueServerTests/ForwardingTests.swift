import SQLiteStore
import Stores
import Sync
import AsyncHTTPClient
import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore
import VinylogueServer

/// The forwarding outbox's sender against the fake Last.fm over real HTTP:
/// every listen arrives once, in order, in batches of 50; failures wait,
/// back off or fail with a reason; a send whose fate is unknown is checked
/// against the account's recent tracks, never sent twice.
@Suite struct ForwardingTests {
    struct Setup: Sendable {
        let fake: FakeLastFM
        let clock: TestClock
        let outbox: SQLiteForwardingOutbox
        let forwarding: ListenForwarding
        let owner: ListOwner
        let database: ArchiveDatabase
        /// A sender on the same outbox whose Last.fm client gives up after `timeout`.
        let sender: @Sendable (Duration) -> ListenForwarding

        func received() async -> [Scrobble] { await fake.scrobbles()["RJ"] ?? [] }

        func scrobbleRequests() async -> Int { await fake.requests().filter { $0.method == "track.scrobble" }.count }

        func state() async throws -> ForwardingState { try await outbox.states(of: owner)[.lastFM] ?? ForwardingState() }

        /// A sender that starts afresh on the same outbox (a restarted server).
        func restarted() -> ListenForwarding {
            ListenForwarding(outbox: outbox, upstreams: forwarding.upstreams, clock: clock.wallClock)
        }
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
                try await outbox.setForwardsToLastFM(true, for: owner, at: clock.now)
                let forwarding = ListenForwarding(outbox: outbox, upstreams: [LastFMForwarding(client: client)], clock: clock.wallClock)
                let patient = configuration
                let sender: @Sendable (Duration) -> ListenForwarding = { timeout in
                    var impatient = patient
                    impatient.timeout = timeout
                    let client = LastFMClient(configuration: impatient, transport: .live(http), clock: clock.wallClock)
                    return ListenForwarding(outbox: outbox, upstreams: [LastFMForwarding(client: client)], clock: clock.wallClock)
                }
                try await body(Setup(fake: fake, clock: clock, outbox: outbox, forwarding: forwarding, owner: owner, database: database,
                                     sender: sender))
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// `count` listens a few minutes apart, the last an hour before now.
    static func listens(_ count: Int, before now: Date, spacing: Int64 = 240) -> [ListenToForward] {
        let last = Int64(now.timeIntervalSince1970) - 3600
        return (0..<count).map { i in
            let instant = last - Int64(count - 1 - i) * spacing
            return ListenToForward(scrobble: Scrobble(instant: instant, artist: "Forwarded Artist \(i % 4)", album: "Forwarded Album",
                                                      track: "Track \(i)"), duration: 200)
        }
    }

    @Test func everyListenReachesLastFMOnceInBatchesOf50() async throws {
        try await Self.withForwarding { setup in
            let listens = Self.listens(120, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            // The same listens again (a player retrying) change nothing.
            try await setup.forwarding.enqueue(Array(listens.prefix(10)), of: setup.owner)
            #expect(await setup.forwarding.sendDue() == 3)
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(await setup.scrobbleRequests() == 3)
            let state = try await setup.state()
            #expect(state.sent == 120 && state.waiting == 0 && state.failed == 0 && state.lastSent == setup.clock.now)
            #expect(await setup.forwarding.sendDue() == 0)
        }
    }

    /// Last.fm's 429-style refusal (error 29): nothing arrived; the listens
    /// wait a minute with the reason, then go.
    @Test func aRateLimitWaitsThenSends() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.apiError(code: 29, status: 429), method: "track.scrobble", times: 1))
            let listens = Self.listens(3, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.forwarding.sendDue()
            var state = try await setup.state()
            #expect(state.waiting == 3 && state.sent == 0)
            #expect(state.problem == SourceError.rateLimited.message)
            setup.clock.advance(days: 59.0 / 86400)
            #expect(await setup.forwarding.sendDue() == 0)
            setup.clock.advance(days: 2.0 / 86400)
            #expect(await setup.forwarding.sendDue() == 1)
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
            await setup.forwarding.sendDue()
            #expect(await setup.received().isEmpty)
            #expect(try await setup.state().waiting == 4)
            setup.clock.advance(days: 1.0 / 24)
            await setup.forwarding.sendDue()
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
            await setup.sender(.milliseconds(200)).sendDue()
            await setup.fake.releaseHeld()
            var state = try await setup.state()
            #expect(state.waiting == 5 && state.problem == SourceError.timeout.message)
            #expect(await setup.received().count == 5)
            setup.clock.advance(days: 1.0 / 24)
            await setup.forwarding.sendDue()
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(await setup.scrobbleRequests() == 1)
            state = try await setup.state()
            #expect(state.sent == 5 && state.waiting == 0)
        }
    }

    /// A sender killed after Last.fm took a batch but before the outbox
    /// heard: the restarted server takes the claim back as uncertain, finds
    /// the batch in the recent tracks, and sends only what never went.
    @Test func aRestartAfterAKilledSendSendsOnlyWhatNeverWent() async throws {
        try await Self.withForwarding { setup in
            let listens = Self.listens(70, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            // What the killed sender did: claimed 50, delivered them, died.
            let claimed = try #require(try await setup.outbox.claim(at: setup.clock.now, lease: 120) { _ in 50 })
            let upstream = try #require(setup.forwarding.upstreams.first)
            #expect(await upstream.send(claimed.listens, as: try await setup.outbox.choice(of: setup.owner)) == .delivered(ignored: [:]))
            let restarted = setup.restarted()
            try await setup.outbox.releaseOrphanedClaims()
            #expect(await restarted.sendDue() == 2)
            #expect(await setup.received() == listens.map(\.scrobble))
            #expect(try await setup.state().sent == 70)
        }
    }

    /// A session Last.fm no longer accepts fails the listens with a sentence
    /// saying what to do; once fixed, "try again" sends them.
    @Test func aRefusedSessionFailsWithWhatToDoAndCanBeTriedAgain() async throws {
        try await Self.withForwarding { setup in
            await setup.fake.inject(.init(.apiError(code: 9, status: 403), method: "track.scrobble", times: 1))
            let listens = Self.listens(3, before: setup.clock.now)
            try await setup.forwarding.enqueue(listens, of: setup.owner)
            await setup.forwarding.sendDue()
            let state = try await setup.state()
            #expect(state.failed == 3 && state.problem?.contains("sign in with Last.fm again") == true)
            #expect(await setup.forwarding.sendDue() == 0)
            #expect(try await setup.outbox.retryFailed(of: setup.owner, target: .lastFM, at: setup.clock.now) == 3)
            await setup.forwarding.sendDue()
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
            await setup.forwarding.sendDue()
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
                await setup.forwarding.sendDue()
                guard let due = try await setup.outbox.nextDue() else { break }
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
