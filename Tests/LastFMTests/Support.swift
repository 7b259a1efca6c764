import AsyncHTTPClient
import Foundation
import LastFM
import LastFMTestServer
import VinylogueCore

/// 8 July 2023: three years after ybsc's captured week.
let fixedNow = Date(timeIntervalSince1970: 1_688_800_000)

/// Runs `body` with a fake Last.fm server and a real client pointed at it.
@discardableResult
func withFakeLastFM<T: Sendable>(
    requestsPerSecond: Int = 100,
    maxAttempts: Int = 3,
    timeout: Duration = .seconds(10),
    maxResponseBytes: Int = 1 << 20,
    cache: (any LastFMResponseCache)? = nil,
    _ body: @Sendable (FakeLastFM, LastFMClient) async throws -> T
) async throws -> T {
    let fake = try FakeLastFM(clock: .fixed(fixedNow))
    let http = LastFMTransport.makeHTTPClient()
    do {
        let result = try await FakeLastFMServer.withRunning(fake) { url in
            let configuration = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: requestsPerSecond,
                                                    maxAttempts: maxAttempts, retryBaseDelay: .milliseconds(20), timeout: timeout,
                                                    maxResponseBytes: maxResponseBytes)
            let client = LastFMClient(configuration: configuration, transport: .live(http), cache: cache, clock: .fixed(fixedNow))
            return try await body(fake, client)
        }
        try await http.shutdown()
        return result
    } catch {
        try? await http.shutdown()
        throw error
    }
}

let ybsc = try! Username("ybsc")
let capturedWeek = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
