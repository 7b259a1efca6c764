import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import VinylogueCore

/// Waits the client asked for, recorded instead of slept: a test sees that
/// `X-RateLimit-Reset-In` and the backoff were honoured without waiting.
actor RecordedWaits {
    private(set) var waits: [Duration] = []
    func add(_ d: Duration) { waits.append(d) }

    nonisolated var pacing: ListenBrainzPacing {
        ListenBrainzPacing(now: { ContinuousClock.now }, sleep: { d in await self.add(d) })
    }
}

/// 2020-06-01 00:00 UTC: the fake's "now", so generated histories end there.
let fakeNow = Date(timeIntervalSince1970: 1_590_969_600)

/// Runs `body` with a fake ListenBrainz over real HTTP and a client pointed at it.
func withFakeListenBrainz<T: Sendable>(
    configure: @Sendable (inout ListenBrainzConfiguration) -> Void = { _ in },
    pacing: ListenBrainzPacing? = nil,
    _ body: @Sendable (ListenBrainzClient, FakeListenBrainz, String) async throws -> T
) async throws -> T {
    let fake = FakeListenBrainz(clock: .fixed(fakeNow))
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let result = try await FakeListenBrainzServer.withRunning(fake) { root in
            // Patient by default: a loaded machine (a full parallel run beside
            // a build) took more than 2 s to answer. A test about timeouts
            // holds the answer and sets a short one itself.
            var configuration = ListenBrainzConfiguration(apiRoot: root, timeout: .seconds(10), backoff: .milliseconds(10))
            configure(&configuration)
            let client = ListenBrainzClient(configuration: configuration, http: http, pacing: pacing ?? .continuous)
            return try await body(client, fake, root)
        }
        try await http.shutdown()
        return result
    } catch {
        try? await http.shutdown()
        throw error
    }
}

/// The `SourceError` `body` throws, or nil.
func failure(_ body: () async throws -> Void) async -> SourceError? {
    do { try await body() } catch { return error as? SourceError }
    return nil
}

enum HTTPClientForTests {
    static func make() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
