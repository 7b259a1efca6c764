import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

@Suite struct ListenBrainzClientTests {
    /// What the client does with a page of listens: the query it sends for
    /// each combination of bounds, and the scrobbles it makes of what comes
    /// back, in the order they came (the fake's own paging is tested in
    /// `FakeListenBrainzTests`).
    @Test func theBoundsAreSentAsAskedAndTheListensReadAsSent() async throws {
        try await withFakeListenBrainz { client, fake, _ in
            await fake.add(user: "ann")
            await fake.addListens([
                .init(listenedAt: 1_500_000_300, artist: "Low", track: "Sunflower", release: "Things We Lost in the Fire",
                      releaseMBID: "3b1f6e4e-6a46-4f5a-9a89-27a1d6c8b0f1", artistMBIDs: ["0c4f7d88-8ff3-4b4e-9d24-1b3d8e0f6c33"]),
                .init(listenedAt: 1_500_000_200, artist: "Fiona Apple", track: "Shameika", release: "Songs for 2020",
                      releaseArtist: "Various Artists"),
                .init(listenedAt: 1_500_000_100, artist: "", track: "Nameless"),
                .init(listenedAt: 1_500_000_000, artist: "Low", track: "Laser Beam", release: "Things We Lost in the Fire"),
            ], to: "ann")
            let all = try await client.listens(of: "ann", maxTs: 1_600_000_000, count: 100)
            #expect(all.listens == [
                Scrobble(instant: 1_500_000_300, artist: "Low", album: "Things We Lost in the Fire", track: "Sunflower",
                         artistMBID: "0c4f7d88-8ff3-4b4e-9d24-1b3d8e0f6c33", albumMBID: "3b1f6e4e-6a46-4f5a-9a89-27a1d6c8b0f1"),
                Scrobble(instant: 1_500_000_200, artist: "Fiona Apple", album: "Songs for 2020", track: "Shameika", albumArtist: "Various Artists"),
                Scrobble(instant: 1_500_000_000, artist: "Low", album: "Things We Lost in the Fire", track: "Laser Beam"),
            ])
            // The listen without an artist is left out, yet counted as sent.
            #expect(all.count == 4)
            _ = try await client.listens(of: "ann", minTs: 1_500_000_000, count: 10)
            _ = try await client.listens(of: "ann", minTs: 1_500_000_000, maxTs: 1_500_000_300, count: 5000)
            _ = try await client.listens(of: "ann", count: 0)
            #expect(await fake.requests().map(\.query) == [
                ["max_ts": "1600000000", "count": "100"],
                ["min_ts": "1500000000", "count": "10"],
                // At most ListenBrainz's own limit is asked for, and at least one.
                ["min_ts": "1500000000", "max_ts": "1500000300", "count": String(ListenBrainzClient.maxCount)],
                ["count": "1"],
            ])
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
