import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

/// The fake ListenBrainz's own behaviour, which other suites lean on: it
/// keeps a repeated listen once as ListenBrainz does, pages a user's
/// listens newest first within their bounds, and reports what it received
/// over HTTP. (What the client sends and reads is `SubmitTests`' and
/// `ListenBrainzClientTests`' business.)
@Suite struct FakeListenBrainzTests {
    @Test func aRepeatedListenIsKeptOnceAndJoinsTheUsersListens() async throws {
        try await withFakeListenBrainz { client, fake, _ in
            #expect(await client.submit(SubmitTests.listens, token: "test-token") == .accepted)
            #expect(await client.submit([SubmitTests.listens[0]], token: "test-token") == .accepted)
            let received = await fake.received()
            #expect(received.listensReceived == 4)
            #expect(received.listens.count == 3)
            let page = try await client.listens(of: "rob", minTs: 1_590_899_999, count: 10)
            #expect(Set(page.listens.map(\.track)).isSuperset(of: ["Kyoto", "Garden Song", "Shameika"]))
        }
    }

    @Test func pagesOfListensAreNewestFirstWithinTheBounds() async throws {
        try await withFakeListenBrainz { client, _, _ in
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
        }
    }

    @Test func theTestAPIReportsWhatWasReceivedOverHTTP() async throws {
        try await withFakeListenBrainz { client, fake, root in
            #expect(await client.submit(SubmitTests.listens, token: "test-token") == .accepted)
            let http = HTTPClientForTests.make()
            let response = try await http.execute(HTTPClientRequest(url: "\(root)/test/received"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            try await http.shutdown()
            let received = try JSONDecoder().decode(FakeListenBrainz.Received.self, from: Data(body.readableBytesView))
            #expect(received == (await fake.received()))
        }
    }
}
