import Foundation
import ListenIngest
import Workers
import HTTPServing
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import Web

/// Share cards over HTTP: the meta tags of each shareable page, and the
/// `card.png` they point at.
@Suite struct ShareCardRouteTests {
    /// The public address the route tests' server names (no public URL configured).
    static let base = "http://127.0.0.1:8080"

    /// The `content` of `<meta property|name="…">` in `html`.
    func meta(_ name: String, in html: String) -> String? {
        for attribute in ["property", "name"] {
            let marker = "<meta \(attribute)=\"\(name)\" content=\""
            guard let start = html.range(of: marker) else { continue }
            let rest = html[start.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        return nil
    }

    func png(_ client: any TestClientProtocol, _ uri: String) async throws -> (status: HTTPResponse.Status, body: Data, type: String?) {
        let response = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
        return (response.status, Data(response.body.readableBytesView), response.headers[.contentType])
    }

    func dimensions(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
        func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }

    /// Checks a page's tags name an absolute card URL under the page's
    /// permalink, and that the card there is a 1200 × 630 PNG.
    func checkShareTags(_ client: any TestClientProtocol, page uri: String, permalinkPrefix: String) async throws {
        let page = try await client.get(uri)
        #expect(page.status == .ok)
        let url = try #require(meta("og:url", in: page.body))
        let image = try #require(meta("og:image", in: page.body))
        #expect(url.hasPrefix(Self.base + permalinkPrefix), "og:url \(url)")
        #expect(image.hasPrefix(Self.base + "/u/"), "og:image \(image)")
        #expect(meta("twitter:image", in: page.body) == image)
        #expect(meta("twitter:card", in: page.body) == "summary_large_image")
        #expect(meta("og:image:width", in: page.body) == "1200" && meta("og:image:height", in: page.body) == "630")
        // The card sits under the permalink's path, with its query.
        let permalinkPath = String(url.dropFirst(Self.base.count))
        let (path, query) = permalinkPath.firstIndex(of: "?").map { (String(permalinkPath[..<$0]), String(permalinkPath[$0...])) }
            ?? (permalinkPath, "")
        #expect(image == Self.base + path + "/card.png" + query)
        // The Share button links to the permalink (escaped like every attribute).
        #expect(page.body.contains("class=\"button secondary share-link\" href=\"\(url.replacingOccurrences(of: "&", with: "&amp;"))\""))
        let card = try await png(client, String(image.dropFirst(Self.base.count)))
        #expect(card.status == .ok)
        #expect(card.type == "image/png")
        // A person may hide their listening at any moment: caches show a card for a minute at most.
        let headers = try await client.execute(uri: String(image.dropFirst(Self.base.count)), method: .head, headers: [:], body: nil).headers
        #expect(headers[.cacheControl] == "public, max-age=60")
        #expect(dimensions(card.body).map { $0 == (1200, 630) } == true)
    }

    /// One server for both, so the demo's covers are drawn once (a quarter
    /// of a second each in a debug build).
    @Test func theDemoUsersPagesCarryAbsoluteCardTagsAndTheirCardsDiffer() async throws {
        try await Harness.run(demo: true) { _, client in
            try await checkShareTags(client, page: "/u/demo", permalinkPrefix: "/u/demo/week/")
            try await checkShareTags(client, page: "/u/demo?years_ago=3", permalinkPrefix: "/u/demo/week/")
            try await checkShareTags(client, page: "/u/demo/history", permalinkPrefix: "/u/demo/history")
            let chart = try await client.get("/u/demo")
            // The first row's album page, as the chart links to it.
            let marker = "<a href=\"/u/demo/album/"
            let start = try #require(chart.body.range(of: marker))
            let rest = chart.body[start.upperBound...]
            let album = "/u/demo/album/" + rest[..<rest.firstIndex(of: "\"")!].replacingOccurrences(of: "&amp;", with: "&")
            try await checkShareTags(client, page: album, permalinkPrefix: "/u/demo/album/")

            let thisYear = try await png(client, "/u/demo/card.png")
            let earlier = try await png(client, "/u/demo/card.png?years_ago=3")
            let dated = try await png(client, "/u/demo/week/2019-07-08/card.png")
            // The clock says 8 July 2023: three years ago is the week of 2020-07-08.
            let sameWeek = try await png(client, "/u/demo/week/2020-07-08/card.png")
            for card in [thisYear, earlier, dated, sameWeek] {
                #expect(card.status == .ok && card.type == "image/png")
                #expect(dimensions(card.body).map { $0 == (1200, 630) } == true)
            }
            #expect(thisYear.body != earlier.body && earlier.body != dated.body)
            // A "3 years ago" page shares its dated permalink: one week, one card.
            #expect(sameWeek.body == earlier.body)
            // Asked again: the same picture (kept, not drawn anew differently).
            #expect(try await png(client, "/u/demo/card.png?years_ago=3").body == earlier.body)
            let history = try await png(client, "/u/demo/history/card.png")
            #expect(history.status == .ok && dimensions(history.body).map { $0 == (1200, 630) } == true)
            // A year in review shares its own card.
            try await checkShareTags(client, page: "/u/demo/year/2022", permalinkPrefix: "/u/demo/year/2022")
            let year = try await png(client, "/u/demo/year/2022/card.png")
            #expect(year.status == .ok && dimensions(year.body).map { $0 == (1200, 630) } == true)
            #expect(year.body != history.body)
            #expect(try await png(client, "/u/demo/year/2022/card.png").body == year.body)
            #expect(try await png(client, "/u/nosuchuser/year/2022/card.png").status == .notFound)
        }
    }

    @Test func cardsOfFailedPagesAnswerThePagesStatusWithACard() async throws {
        try await Harness.run { _, client in
            // A private profile is 404 on the page, so on its card too.
            var hidden = try await png(client, "/u/hidden/card.png")
            // A run loaded past the page's patience answers 503 (Last.fm is
            // slow) first; a reload joins the request still under way.
            for _ in 0..<20 where hidden.status == .serviceUnavailable { hidden = try await png(client, "/u/hidden/card.png") }
            #expect(hidden.status == .notFound)
            #expect(hidden.type == "image/png" && dimensions(hidden.body).map { $0 == (1200, 630) } == true)
            let bad = try await client.get("/u/ybsc/week/not-a-date/card.png")
            #expect(bad.status == .badRequest)
        }
    }

    @Test func theMetaTagsFollowTheConfiguredPublicURL() async throws {
        var server = ServerConfiguration()
        server.publicURL = "https://vinylogue.example/"
        try await Harness.run(demo: true, server: server) { _, client in
            let page = try await client.get("/u/demo/history")
            #expect(meta("og:image", in: page.body) == "https://vinylogue.example/u/demo/history/card.png")
            #expect(meta("og:url", in: page.body) == "https://vinylogue.example/u/demo/history")
        }
    }
}
