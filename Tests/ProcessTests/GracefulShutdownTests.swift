import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import TestSupport
import VinylogueCore

/// `vinylogue serve` stopped with SIGTERM (as systemd and most supervisors
/// stop it) finishes the pages it is answering before it exits.
@Suite struct GracefulShutdownTests {
    @Test func aPageInFlightWhenSIGTERMArrivesStillAnswersInFull() async throws {
        let dir = try TemporaryDirectory()
        let fake = try ConcurrentServeTests.Child(try KillTests.executable("fake-lastfm"), ["--port", "0", "--now", "1688800000"],
                                                  marker: "fake Last.fm listening at ", output: \.standardOutput)
        let lastFMAPI = try await fake.serving()
        var environment = ProcessInfo.processInfo.environment
        environment["LASTFM_API_URL"] = lastFMAPI
        environment["LASTFM_API_KEY"] = "test-key"
        let serving = try ConcurrentServeTests.Child(try KillTests.executable(), ["serve", "--port", "0", "--data-dir", dir.url.path],
                                                     environment: environment, marker: "Vinylogue is serving at ", output: \.standardError)
        let base = String(try await serving.serving().dropLast()), lastFM = String(lastFMAPI.dropLast("/2.0/".count))
        let exited = serving.exit()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            // Last.fm holds the week's chart until the test lets it go.
            var hold = HTTPClientRequest(url: lastFM + "/_fake/faults")
            hold.method = .POST
            hold.headers.add(name: "Content-Type", value: "application/json")
            hold.body = .bytes(ByteBuffer(string: #"{"fault":{"held":{}},"method":"user.getweeklyalbumchart"}"#))
            #expect(try await http.execute(hold, timeout: .seconds(10)).status == .noContent)

            let page = Task { try await ConcurrentServeTests.page(http, base + "/u/RJ/week/2015-06-10") }
            _ = try await http.execute(HTTPClientRequest(url: lastFM + "/_fake/held?count=1"), timeout: .seconds(10))
            // The page is waiting for Last.fm: stop the server now.
            kill(serving.process.processIdentifier, SIGTERM)
            var release = HTTPClientRequest(url: lastFM + "/_fake/held/release")
            release.method = .POST
            _ = try await http.execute(release, timeout: .seconds(10))

            let answered = try await page.value
            #expect(answered.status == 200)
            #expect(!answered.waiting)
            #expect(await exited.value(within: .seconds(10)) == 0, "serve exits cleanly once the page is answered")
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}
