import Artwork
import AsyncHTTPClient
import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

/// The fake Last.fm answers the same in this process as over HTTP: the
/// route tests hand it the app's requests directly (`LastFMTransport.inProcess`,
/// `ArtworkUpstream.inProcess`), and what they test must hold over a socket.
@Suite struct InProcessTransportTests {
    /// Runs `body` with the fake served over HTTP, the live transport to it,
    /// and the in-process transport; both are given paths after `/2.0/`.
    static func withBoth(_ body: @Sendable (FakeLastFM, _ live: (String) -> String, LastFMTransport, LastFMTransport, HTTPClient) async throws -> Void) async throws {
        let fake = try FakeLastFM(clock: .fixed(fixedNow))
        let http = LastFMTransport.makeHTTPClient()
        do {
            try await FakeLastFMServer.withRunning(fake) { url in
                try await body(fake, { url.replacingOccurrences(of: "2.0/", with: $0) }, .live(http), .inProcess(fake), http)
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    static let invalid = "http://fake-lastfm.invalid/"

    @Test func everyAnswerIsTheSameEitherWay() async throws {
        try await Self.withBoth { fake, address, live, inProcess, _ in
            let queries = [
                "method=user.getinfo&user=ybsc&api_key=test-key&format=json",
                "method=user.getweeklychartlist&user=RJ&api_key=test-key&format=json",
                "method=user.getweeklyalbumchart&user=ybsc&from=1593950400&to=1594555200&api_key=test-key&format=json",
                "method=album.getinfo&artist=Pinegrove&album=Cardinal&username=ybsc&api_key=test-key&format=json",
                "method=album.getinfo&artist=The%20Velvet%20Lanterns&album=A%2BB%26C&api_key=test-key&format=json",
                "method=user.getinfo&user=nosuchuser&api_key=test-key&format=json",
                "method=user.getweeklychartlist&user=hidden&api_key=test-key&format=json",
                "method=user.getinfo&user=ybsc&api_key=wrong&format=json",
                "method=user.getinfo&user=ybsc&api_key=test-key",
            ]
            for query in queries {
                let overHTTP = try await live.get(address("2.0/") + "?" + query, .seconds(10), 1 << 20)
                let here = try await inProcess.get(Self.invalid + "2.0/?" + query, .seconds(10), 1 << 20)
                #expect(here.status == overHTTP.status, "\(query)")
                #expect(here.body == overHTTP.body, "\(query)")
            }
            // A form, as `track.scrobble` is sent.
            let form = "method=auth.getToken&api_key=test-key&format=json&note=a+b%2Bc"
            let overHTTP = try await live.exchange(address("2.0/"), form, .seconds(10), 1 << 20)
            let here = try await inProcess.exchange(Self.invalid + "2.0/", form, .seconds(10), 1 << 20)
            #expect(here.status == overHTTP.status)
            #expect(try JSONSerialization.jsonObject(with: here.body) as? [String: String] != nil)
            let parameters = await fake.requests().suffix(2).map(\.parameters)
            #expect(parameters.count == 2 && parameters[0] == parameters[1], "\(parameters)")
            // Anywhere but the API is not found.
            #expect(try await inProcess.get(Self.invalid + "3.0/?method=user.getinfo", .seconds(10), 1 << 20).status == 404)
        }
    }

    @Test func anOversizedAnswerAndAHeldOneFailAlikeEitherWay() async throws {
        try await Self.withBoth { fake, address, live, inProcess, _ in
            let query = "?method=user.getinfo&user=ybsc&api_key=test-key&format=json"
            await fake.inject(.init(.oversized(bytes: 4096), times: 2))
            let overHTTP = await Self.failure { _ = try await live.get(address("2.0/") + query, .seconds(10), 1024) }
            let here = await Self.failure { _ = try await inProcess.get(Self.invalid + "2.0/" + query, .seconds(10), 1024) }
            #expect(overHTTP != nil && here == overHTTP, "\(String(describing: here)) \(String(describing: overHTTP))")

            await fake.inject(.init(.held, times: 2))
            #expect(await Self.failure { _ = try await live.get(address("2.0/") + query, .milliseconds(300), 1 << 20) } == .timeout)
            #expect(await Self.failure { _ = try await inProcess.get(Self.invalid + "2.0/" + query, .milliseconds(300), 1 << 20) } == .timeout)
            await fake.releaseHeld()
        }
    }

    @Test func imagesAreTheSameEitherWay() async throws {
        try await Self.withBoth { fake, address, _, _, http in
            let live = ArtworkUpstream.live(http), inProcess = ArtworkUpstream.inProcess(fake)
            for path in ["i/u/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png", "i/u/64s/0123456789abcdef0123456789abcdef.jpg",
                         "i/u/300x300/nothex.png", "i/u/300x300/a/bebe11f4ddf3dee473b26c7e2d5c9ff6.png", "bebe11f4ddf3dee473b26c7e2d5c9ff6.png"] {
                let overHTTP = try await live.fetch(address(path)), here = try await inProcess.fetch(Self.invalid + path)
                #expect(here.status == overHTTP.status, "\(path)")
                if overHTTP.status == 200 { #expect(here.body == overHTTP.body, "\(path)") }
            }
            let image = "i/u/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png"
            await #expect(throws: ArtworkError.tooLarge) { _ = try await ArtworkUpstream.live(http, maxBytes: 100).fetch(address(image)) }
            await #expect(throws: ArtworkError.tooLarge) { _ = try await ArtworkUpstream.inProcess(fake, maxBytes: 100).fetch(Self.invalid + image) }
        }
    }

    /// The `SourceError` `body` throws, or nil.
    static func failure(_ body: () async throws -> Void) async -> SourceError? {
        do { try await body() } catch { return error as? SourceError }
        return nil
    }
}
