import Foundation
import HummingbirdTesting
import Testing

/// Every screen answers the same failure with the same status code.
@Suite struct FailureStatusTests {
    /// A private profile used to be 404 on the chart, 502 on the every-year
    /// page and 200 on the album page.
    @Test func aPrivateProfileIsNotFoundOnEveryScreen() async throws {
        try await Harness.run { _, client in
            let screens = [
                "/u/hidden", "/u/hidden/week/2020-07-08", "/u/hidden/history",
                "/u/hidden/album/Paramore/Paramore?week=2020-07-08", "/u/hidden/album/Paramore/Paramore",
                "/u/hidden/feed.atom", "/api/u/hidden/chart",
            ]
            for uri in screens {
                let answer = try await client.get(uri)
                #expect(answer.status == .notFound, "\(uri)")
                #expect(answer.body.contains("private on Last.fm"), "\(uri)")
            }
        }
    }

    /// Last.fm down with nothing saved: every screen says so with 502.
    @Test func anUpstreamFailureIsBadGatewayOnEveryScreen() async throws {
        try await Harness.run { harness, client in
            await harness.fake.inject(.init(.apiError(code: 16, status: 200), user: "ybsc"))
            for uri in ["/u/ybsc?years_ago=3", "/u/ybsc/history", "/u/ybsc/album/Paramore/Paramore?week=2020-07-08",
                        "/u/ybsc/feed.atom", "/api/u/ybsc/chart"] {
                let answer = try await client.get(uri)
                #expect(answer.status == .badGateway, "\(uri)")
                #expect(answer.body.contains("temporarily unavailable"), "\(uri)")
            }
        }
    }
}
