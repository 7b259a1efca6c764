import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

/// The fake ListenBrainz answers the client the same in this process as
/// over HTTP: the route tests hand it the app's requests directly
/// (`ListenBrainzTransport.inProcess`), and what they test must hold over a
/// socket.
@Suite struct InProcessTransportTests {
    /// A client of the fake over HTTP and one in this process, configured alike.
    static func withBoth(_ configure: @escaping @Sendable (inout ListenBrainzConfiguration) -> Void = { _ in },
                         _ body: @Sendable (FakeListenBrainz, _ overHTTP: ListenBrainzClient, _ here: ListenBrainzClient) async throws -> Void) async throws {
        try await withFakeListenBrainz(configure: configure) { overHTTP, fake, _ in
            var configuration = overHTTP.configuration
            configuration.apiRoot = "http://fake-listenbrainz.invalid"
            try await body(fake, overHTTP, ListenBrainzClient(configuration: configuration, transport: .inProcess(fake)))
        }
    }

    @Test func listensTokensAndSubmissionsAreTheSameEitherWay() async throws {
        try await Self.withBoth { fake, overHTTP, here in
            for (min, max) in [(nil, nil), (Int64(1_300_000_000), nil), (nil, Int64(1_400_000_000)), (Int64(1_300_000_000), Int64(1_300_900_000))] {
                let a = try await overHTTP.listens(of: "rob", minTs: min, maxTs: max, count: 50)
                let b = try await here.listens(of: "rob", minTs: min, maxTs: max, count: 50)
                #expect(a == b, "\(String(describing: min)) \(String(describing: max))")
            }
            #expect(await failure { _ = try await overHTTP.listens(of: "nobody") } == failure { _ = try await here.listens(of: "nobody") })
            #expect(try await overHTTP.validate(token: "test-token") == here.validate(token: "test-token"))
            #expect(try await overHTTP.validate(token: "wrong") == here.validate(token: "wrong"))
            let listen = Scrobble(instant: 1_590_000_000, artist: "Low", album: "", track: "Sunflower")
            #expect(await overHTTP.submit([listen], token: "test-token") == .accepted)
            #expect(await here.submit([listen], token: "test-token") == .accepted)
            #expect(await overHTTP.submit([listen], token: "wrong") == here.submit([listen], token: "wrong"))
            let received = await fake.received()
            #expect(received.submissions == 2 && received.listensReceived == 2 && received.listens.count == 1)
        }
    }

    @Test func faultsAreTheSameEitherWay() async throws {
        try await Self.withBoth({ $0.attempts = 1; $0.maxResponseBytes = 4096 }) { fake, overHTTP, here in
            for fault in [FakeListenBrainz.Fault.oversized(bytes: 10_000), .truncated, .malformed, .wrongTypes, .httpStatus(503),
                          .rateLimited(resetIn: 3)] {
                await fake.inject(.init(fault, endpoint: "listens", times: 2))
                let a = await failure { _ = try await overHTTP.listens(of: "rob", count: 5) }
                let b = await failure { _ = try await here.listens(of: "rob", count: 5) }
                #expect(a != nil && a == b, "\(fault): \(String(describing: a)) \(String(describing: b))")
            }
        }
        try await Self.withBoth({ $0.attempts = 1; $0.timeout = .milliseconds(300) }) { fake, overHTTP, here in
            await fake.inject(.init(.held, endpoint: "listens", times: 2))
            #expect(await failure { _ = try await overHTTP.listens(of: "rob", count: 5) } == .listenBrainz(.timeout))
            #expect(await failure { _ = try await here.listens(of: "rob", count: 5) } == .listenBrainz(.timeout))
            await fake.releaseHeld()
        }
    }
}
