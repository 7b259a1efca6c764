import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

@Suite struct ErrorTests {
    @Test func anUnknownUserIsNotFound() async throws {
        try await withFakeLastFM { _, client in
            await #expect(throws: SourceError.notFound(what: "The user “nobody”")) { try await client.user(try Username("nobody")) }
        }
    }

    /// Each Last.fm error code, with HTTP 200 and with 4xx, becomes its own error.
    @Test(arguments: [
        (6, SourceError.notFound(what: "The user “ybsc”")),
        (17, SourceError.privateProfile(user: "ybsc")),
        (10, SourceError.invalidAPIKey(code: 10)),
        (26, SourceError.invalidAPIKey(code: 26)),
        (29, SourceError.rateLimited),
        (8, SourceError.temporarilyUnavailable(detail: "error 8, “Operation failed”")),
        (11, SourceError.temporarilyUnavailable(detail: "error 11, “Service Offline”")),
        (16, SourceError.temporarilyUnavailable(detail: "error 16, “There was a temporary error processing your request”")),
        (13, SourceError.api(code: 13, message: "")),
    ])
    func errorCodes(code: Int, expected: SourceError) async throws {
        for status in [200, 400] {
            try await withFakeLastFM(maxAttempts: 1) { fake, client in
                await fake.inject(.init(.apiError(code: code, status: status)))
                await #expect(throws: expected) { try await client.chartList(for: ybsc) }
            }
        }
        // Every message is a sentence (the front ends add their next steps).
        #expect(expected.message.hasSuffix("."))
    }

    @Test func lastFMsOwnWordingIsShortenedIntoOurSentence() {
        #expect(SourceError.temporarilyUnavailable(detail: "error 11, “Service Offline”").message
            == "Last.fm is temporarily unavailable (error 11, “Service Offline”).")
        #expect(SourceError.api(code: 13, message: "").message == "Last.fm refused the request (error 13).")
    }

    @Test func aPrivateProfileSaysSo() async throws {
        try await withFakeLastFM { _, client in
            await #expect(throws: SourceError.privateProfile(user: "hidden")) { try await client.chartList(for: try Username("hidden")) }
        }
    }

    @Test func aWrongKeyIsAConfigurationError() async throws {
        let fake = try FakeLastFM(clock: .fixed(fixedNow), apiKey: "another-key")
        let http = HTTPClientForTests()
        try await FakeLastFMServer.withRunning(fake) { url in
            let client = LastFMClient(configuration: .init(apiKey: "test-key", baseURL: url), transport: .live(http.client), clock: .fixed(fixedNow))
            await #expect(throws: SourceError.invalidAPIKey(code: 10)) { try await client.user(ybsc) }
        }
        try await http.client.shutdown()
    }

    @Test func aMissingKeyFailsBeforeAnyRequest() async throws {
        try await withFakeLastFM { fake, client in
            let keyless = LastFMClient(configuration: .init(apiKey: "  ", baseURL: client.configuration.baseURL),
                                       transport: .init { _, _, _, _ throws(SourceError) in throw .transport(detail: "must not be called") },
                                       clock: .fixed(fixedNow))
            await #expect(throws: SourceError.missingAPIKey) { try await keyless.user(ybsc) }
            #expect(await fake.requests().isEmpty)
        }
    }

    @Test func temporaryFailuresAreRetriedThenSucceed() async throws {
        try await withFakeLastFM(maxAttempts: 3) { fake, client in
            await fake.inject(.init(.apiError(code: 11, status: 503), times: 1))
            await fake.inject(.init(.httpStatus(502), times: 1))
            let list = try await client.chartList(for: ybsc)
            #expect(list.weeks.count == 804)
            #expect(await fake.requests().count == 3)
        }
    }

    @Test func retriesAreBounded() async throws {
        try await withFakeLastFM(maxAttempts: 3) { fake, client in
            await fake.inject(.init(.httpStatus(500)))
            await #expect(throws: SourceError.temporarilyUnavailable(detail: "HTTP 500")) { try await client.chartList(for: ybsc) }
            #expect(await fake.requests().count == 3)
        }
    }

    @Test func permanentErrorsAreNotRetried() async throws {
        try await withFakeLastFM(maxAttempts: 3) { fake, client in
            await fake.inject(.init(.apiError(code: 29, status: 429)))
            await #expect(throws: SourceError.rateLimited) { try await client.chartList(for: ybsc) }
            await fake.inject(.init(.apiError(code: 6, status: 404)))
            await #expect(throws: SourceError.self) { try await client.user(ybsc) }
            #expect(await fake.requests().count == 2)
        }
    }

    @Test(arguments: [FakeLastFM.Fault.truncated, .malformed, .wrongShape])
    func brokenBodiesAreMalformedNeverACrash(fault: FakeLastFM.Fault) async throws {
        try await withFakeLastFM(maxAttempts: 1) { fake, client in
            await fake.inject(.init(fault))
            for call in 0..<4 {
                do {
                    switch call {
                    case 0: _ = try await client.chartList(for: ybsc)
                    case 1: _ = try await client.chart(for: ybsc, kind: .album, week: capturedWeek)
                    case 2: _ = try await client.album(artist: "Paramore", name: "Paramore", mbid: nil, user: nil)
                    default: _ = try await client.user(ybsc)
                    }
                    Issue.record("call \(call) should have failed")
                } catch {
                    guard case .malformedResponse? = error as? SourceError else { Issue.record("unexpected \(error)"); continue }
                }
            }
        }
    }

    @Test func oversizedResponsesAreRefused() async throws {
        try await withFakeLastFM(maxAttempts: 1, maxResponseBytes: 64 * 1024) { fake, client in
            await fake.inject(.init(.oversized(bytes: 200 * 1024)))
            do {
                _ = try await client.chartList(for: ybsc)
                Issue.record("expected a failure")
            } catch {
                guard case .malformedResponse(let detail)? = error as? SourceError else { Issue.record("unexpected \(error)"); return }
                #expect(detail.contains("larger than"))
            }
        }
    }

    @Test func slowAnswersTimeOut() async throws {
        try await withFakeLastFM(maxAttempts: 2, timeout: .milliseconds(300)) { fake, client in
            await fake.inject(.init(.delay(milliseconds: 2000)))
            await #expect(throws: SourceError.timeout) { try await client.user(ybsc) }
            #expect(await fake.requests().count == 2)  // retried once
        }
    }

    /// A refused connection fails at once, in words, and is retried by the
    /// client like any temporary failure — it used to wait out the whole
    /// request timeout inside AsyncHTTPClient (10 s here, ×2 attempts,
    /// and then failed as a timeout, not as a refused connection).
    @Test(.timeLimit(.minutes(1))) func anUnreachableServerIsATransportError() async throws {
        let http = HTTPClientForTests()
        // Port 9 (discard) on loopback: nothing listens there.
        let client = LastFMClient(configuration: .init(apiKey: "k", baseURL: "http://127.0.0.1:9/2.0/", maxAttempts: 2,
                                                       retryBaseDelay: .milliseconds(10), timeout: .seconds(10)),
                                  transport: .live(http.client), clock: .fixed(fixedNow))
        do {
            _ = try await client.user(ybsc)
            Issue.record("expected a failure")
        } catch {
            #expect(error == .transport(detail: "the connection was refused"))
            #expect(error.message == "Could not reach Last.fm (the connection was refused).")
        }
        try await http.client.shutdown()
    }
}

import AsyncHTTPClient

/// An HTTP client the test shuts down itself.
struct HTTPClientForTests {
    let client = LastFMTransport.makeHTTPClient()
}
