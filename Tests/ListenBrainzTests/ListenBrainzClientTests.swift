import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

@Suite struct ListenBrainzClientTests {
    @Test func pagesOfListensAreNewestFirstWithinTheBounds() async throws {
        try await withFakeListenBrainz { client, fake, _ in
            let maxTs: Int64 = 1_577_836_800  // 2020-01-01
            let first = try await client.listens(of: "rob", maxTs: maxTs, count: 100)
            #expect(first.count == 100 && first.listens.count == 100)
            #expect(first.listens.allSatisfy { $0.instant < maxTs })
            #expect(first.listens.map(\.instant) == first.listens.map(\.instant).sorted(by: >))
            #expect(first.listens.allSatisfy { !$0.artist.isEmpty && !$0.track.isEmpty && !$0.album.isEmpty })
            // The next page starts below the oldest listen of this one.
            let oldest = try #require(first.listens.last?.instant)
            let second = try await client.listens(of: "rob", maxTs: oldest, count: 100)
            #expect(second.listens.allSatisfy { $0.instant < oldest })
            #expect(Set(first.listens).isDisjoint(with: second.listens))
            // With only min_ts: the oldest listens after it, still newest first.
            let after = try await client.listens(of: "rob", minTs: oldest, count: 10)
            #expect(after.listens.count == 10)
            #expect(after.listens.allSatisfy { $0.instant > oldest })
            #expect(after.listens.last!.instant == first.listens.filter { $0.instant > oldest }.map(\.instant).min())
            // Both bounds: only what lies strictly between.
            let between = try await client.listens(of: "rob", minTs: oldest, maxTs: first.listens[0].instant, count: 1000)
            #expect(between.listens.count == 98)
            let asked = await fake.requests().map(\.query)
            #expect(asked.first == ["max_ts": String(maxTs), "count": "100"])
        }
    }

    @Test func anUnknownUserIsASentence() async throws {
        try await withFakeListenBrainz { client, fake, _ in
            let error = await failure { _ = try await client.listens(of: "nobody") }
            #expect(error == .listenBrainz(.userNotFound(user: "nobody")))
            #expect(error?.message == "ListenBrainz has no user “nobody”.")
            #expect(error?.isTemporary == false)
            #expect(await fake.requests().count == 1)
        }
    }

    @Test func a429IsWaitedOutForTheResetItNames() async throws {
        let waits = RecordedWaits()
        try await withFakeListenBrainz(pacing: waits.pacing) { client, fake, _ in
            await fake.inject(.init(.rateLimited(resetIn: 7), endpoint: "listens", times: 2))
            let page = try await client.listens(of: "rob", maxTs: 1_577_836_800, count: 5)
            #expect(page.listens.count == 5)
            #expect(await fake.requests().map(\.status) == [429, 429, 200])
        }
        #expect(await waits.waits.filter { $0 >= .seconds(7) }.count == 2)
    }

    @Test func rateLimitingThatNeverEndsIsASentenceWithItsWait() async throws {
        let waits = RecordedWaits()
        try await withFakeListenBrainz(pacing: waits.pacing) { client, fake, _ in
            await fake.inject(.init(.rateLimited(resetIn: 3), endpoint: "listens"))
            let error = await failure { _ = try await client.listens(of: "rob") }
            #expect(error == .listenBrainz(.rateLimited(retryAfter: 3)))
            #expect(error?.isTemporary == true)
            #expect(await fake.requests().count == 4)
        }
    }

    @Test func anEmptyWindowIsWaitedForBeforeTheRequest() async throws {
        let waits = RecordedWaits()
        try await withFakeListenBrainz(pacing: waits.pacing) { client, fake, _ in
            // Two requests a 10-second window: the second answer says
            // Remaining 0, so the third request waits for the reset first.
            await fake.setRateWindow(.init(limit: 2, seconds: 10))
            for _ in 0..<3 { _ = try await client.listens(of: "rob", count: 1) }
            #expect(await fake.requests().map(\.status) == [200, 200, 200])
        }
        let waited = await waits.waits
        #expect(waited.count == 1)
        #expect(waited.allSatisfy { $0 > .seconds(1) && $0 <= .seconds(10) }, "\(waited)")
    }

    @Test func serverErrorsAreRetriedWithGrowingBackoff() async throws {
        let waits = RecordedWaits()
        try await withFakeListenBrainz(pacing: waits.pacing) { client, fake, _ in
            await fake.inject(.init(.httpStatus(503), endpoint: "listens", times: 2))
            let page = try await client.listens(of: "alice", count: 3)
            #expect(page.listens.count == 3)
            #expect(await fake.requests().map(\.status) == [503, 503, 200])
            await fake.inject(.init(.httpStatus(502), endpoint: "listens"))
            let error = await failure { _ = try await client.listens(of: "alice") }
            #expect(error == .listenBrainz(.unavailable(status: 502)))
            #expect(error?.message == "ListenBrainz is temporarily unavailable (HTTP 502).")
        }
        #expect(await Array(waits.waits.prefix(2)) == [.milliseconds(10), .milliseconds(20)])
    }

    @Test func anAnswerHeldPastTheTimeoutIsATimeout() async throws {
        try await withFakeListenBrainz(configure: { $0.timeout = .milliseconds(300); $0.attempts = 2 }) { client, fake, _ in
            await fake.inject(.init(.held, endpoint: "listens"))
            let error = await failure { _ = try await client.listens(of: "rob") }
            #expect(error == .listenBrainz(.timeout))
            #expect(error?.message == "ListenBrainz did not answer in time.")
            #expect(await fake.requests().count == 2)
            await fake.releaseHeld()
        }
    }

    @Test(arguments: [
        (FakeListenBrainz.Fault.truncated, "the answer is not complete JSON"),
        (.malformed, "the answer is not complete JSON"),
        (.wrongTypes, "“payload.count” has the wrong type"),
    ])
    func unreadableAnswersAreClearSentences(fault: FakeListenBrainz.Fault, detail: String) async throws {
        try await withFakeListenBrainz { client, fake, _ in
            await fake.inject(.init(fault, endpoint: "listens"))
            let error = await failure { _ = try await client.listens(of: "rob") }
            #expect(error == .listenBrainz(.malformedResponse(detail: detail)))
            #expect(error?.message == "ListenBrainz sent a response Vinylogue could not read (\(detail)).")
        }
    }

    @Test func anOversizedAnswerIsRefused() async throws {
        try await withFakeListenBrainz(configure: { $0.maxResponseBytes = 64 * 1024; $0.attempts = 1 }) { client, fake, _ in
            await fake.inject(.init(.oversized(bytes: 200_000), endpoint: "listens"))
            let error = await failure { _ = try await client.listens(of: "rob") }
            #expect(error == .listenBrainz(.malformedResponse(detail: "the response was larger than 64 KiB")))
        }
    }

    @Test func anUnreachableServerIsATransportFailure() async throws {
        let waits = RecordedWaits()
        let http = HTTPClientForTests.make()
        // Nothing listens on port 9 of this machine. (Not a fake that was
        // just stopped: a connection reaching a server as it shuts down
        // trips an assertion in NIO's async writer and takes the tests down.)
        let client = ListenBrainzClient(configuration: .init(apiRoot: "http://127.0.0.1:9"), http: http, pacing: waits.pacing)
        let error = await failure { _ = try await client.listens(of: "rob") }
        try await http.shutdown()
        guard case .listenBrainz(.transport)? = error else { Issue.record("expected a transport failure, got \(String(describing: error))"); return }
        #expect(error?.message.hasPrefix("Could not reach ListenBrainz (") == true)
        #expect(await waits.waits.count == 3)
    }
}
