import Artwork
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import NIOCore
import SQLiteStore
import Testing
import VinylogueCore
@testable import HTTPServing
@testable import ListenIngest
@testable import Web

/// A person's widget for their own page: `/u/{user}/widget.png`,
/// `/u/{user}/widget.svg` and the page for a frame, `/u/{user}/widget`.
@Suite struct WidgetRouteTests {
    /// The public address the route tests' server names (no public URL configured).
    static let base = ShareCardRouteTests.base
    static let svgNamespace = "http://www.w3.org/2000/svg"
    static let frameOptions = SecurityHeaderFields.frameOptions

    static func get(_ client: any TestClientProtocol, _ uri: String) async throws -> TestResponse {
        var response = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
        // A run loaded past the page's patience answers 503 (Last.fm is
        // slow) first; a reload joins the request still under way.
        for _ in 0..<20 where response.status == .serviceUnavailable {
            response = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
        }
        return response
    }

    /// The SVG read by Foundation's XML parser: every element with its
    /// attributes, and the text of each `<text>`.
    final class SVGReader: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        var texts: [String] = []
        private var current: String?

        static func read(_ data: Data) throws -> SVGReader {
            let reader = SVGReader()
            let parser = XMLParser(data: data)
            parser.delegate = reader
            guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
            return reader
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            elements.append((name, attributes))
            if name == "text" { current = "" }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { current? += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "text", let text = current { texts.append(text) }
            current = nil
        }
    }

    /// What the SVG's every attribute may name: nothing but its namespace,
    /// this server, and embedded PNG or JPEG covers.
    static func expectSafe(_ svg: SVGReader, _ raw: String) {
        #expect(svg.elements.first?.name == "svg")
        #expect(!raw.lowercased().contains("<script"))
        for (name, attributes) in svg.elements {
            #expect(!["script", "foreignObject", "iframe", "style"].contains(name), "\(name)")
            for (attribute, value) in attributes {
                #expect(!attribute.lowercased().hasPrefix("on"), "\(name) \(attribute)")
                if value.contains("http") || value.contains(":/") {
                    #expect(value == svgNamespace || value.hasPrefix(base + "/"), "\(name) \(attribute)=\(value)")
                }
                if name == "image" {
                    #expect(attribute != "href" || value.hasPrefix("data:image/jpeg;base64,") || value.hasPrefix("data:image/png;base64,"))
                }
            }
        }
    }

    /// `name` as the SVG shows it: cut to `limit` characters with "…".
    static func shown(_ name: String, limit: Int = 26) -> String { name.count > limit ? name.prefix(limit - 1) + "…" : name }

    @Test func thePNGIsASidebarPictureOfTheWeek() async throws {
        try await Harness.run(demo: true) { _, client in
            let png = try await Self.get(client, "/u/demo/widget.png")
            #expect(png.status == .ok)
            #expect(png.headers[.contentType] == "image/png")
            let data = Data(png.body.readableBytesView)
            let pixels = try ImageDecoding(maxSide: 1000).pixels(from: data)
            #expect(pixels.width == WidgetCard.width && pixels.height == WidgetCard.height)
            #expect((pixels.width, pixels.height) == (300, 400))
            // Asked again: the kept answer, byte for byte.
            #expect(try await Self.get(client, "/u/demo/widget.png").body == png.body)
            let two = try await Self.get(client, "/u/demo/widget.png?years_ago=2")
            #expect(two.status == .ok && two.body != png.body)
            #expect(try ImageDecoding(maxSide: 1000).pixels(from: Data(two.body.readableBytesView)).width == 300)
            for bad in ["0", "101", "two", "-1"] {
                #expect(try await Self.get(client, "/u/demo/widget.png?years_ago=\(bad)").status == .badRequest, "\(bad)")
                #expect(try await Self.get(client, "/u/demo/widget.svg?years_ago=\(bad)").status == .badRequest, "\(bad)")
                #expect(try await Self.get(client, "/u/demo/widget?years_ago=\(bad)").status == .badRequest, "\(bad)")
            }
        }
    }

    @Test func theSVGIsSafeXMLWithTheWeeksAlbumsAndEmbeddedCovers() async throws {
        try await Harness.run(demo: true) { _, client in
            let response = try await Self.get(client, "/u/demo/widget.svg?years_ago=3")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "image/svg+xml")
            let policy = try #require(response.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'none'") && policy.contains("default-src 'none'"), "\(policy)")
            #expect(response.headers[values: .contentSecurityPolicy].count == 1)
            let raw = String(buffer: response.body)
            let svg = try SVGReader.read(Data(response.body.readableBytesView))
            Self.expectSafe(svg, raw)
            #expect(svg.texts.contains("demo") && svg.texts.contains("This week, 3 years ago"))
            // The chart's top five, as the JSON API gives them (with the same settings).
            let chart = try JSONSerialization.jsonObject(with: Data(try await client.get("/api/u/demo/chart?years_ago=3").body.utf8)) as? [String: Any]
            let entries = try #require(chart?["entries"] as? [[String: Any]])
            let top = entries.prefix(5)
            #expect(top.count == 5)
            for entry in top {
                let name = try #require(entry["name"] as? String)
                #expect(svg.texts.contains(Self.shown(name)), "\(name) in \(svg.texts)")
            }
            // Five covers, each a data: URI of the art store's bytes, and one link to the chart page here.
            let images = svg.elements.filter { $0.name == "image" }
            #expect(images.count == 5)
            let links = svg.elements.filter { $0.name == "a" }.compactMap { $0.attributes["href"] }
            #expect(links == [Self.base + "/u/demo?years_ago=3"])
            // Kept: asked again, the same bytes.
            #expect(try await Self.get(client, "/u/demo/widget.svg?years_ago=3").body == response.body)
        }
    }

    @Test func hostileNamesAreEscapedInEveryForm() async throws {
        try await Harness.run { harness, client in
            let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
            await harness.fake.add(user: "mallory", .scripted(weeks: [week], albums: [
                ChartEntry(rank: 1, artist: "<script>alert(1)</script>", name: "\"><img src=x onerror=alert(2)>", plays: 9),
                ChartEntry(rank: 2, artist: "Tom & Jerry's", name: "<&\"'>", plays: 3),
                ChartEntry(rank: 3, artist: "Bell\u{7}", name: "]]><svg onload=alert(3)>", plays: 2),
            ]))
            let response = try await Self.get(client, "/u/mallory/widget.svg?week=2020-07-08")
            #expect(response.status == .ok)
            let raw = String(buffer: response.body)
            let svg = try SVGReader.read(Data(response.body.readableBytesView))
            Self.expectSafe(svg, raw)
            #expect(raw.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(raw.contains("&lt;&amp;&quot;&apos;&gt;") && raw.contains("Tom &amp; Jerry&apos;s"))
            #expect(!raw.contains("<img") && !raw.contains("<svg onload"))
            // Read back, the names are the names (a control character XML cannot carry is U+FFFD).
            #expect(svg.texts.contains("<&\"'>") && svg.texts.contains("Tom & Jerry's") && svg.texts.contains("Bell\u{FFFD}"))
            #expect(svg.texts.contains(Self.shown("\"><img src=x onerror=alert(2)>")))

            let page = try await Self.get(client, "/u/mallory/widget?week=2020-07-08")
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(!html.contains("<script>alert") && !html.contains("<img src=x"))
            #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && html.contains("Tom &amp; Jerry&#39;s"))

            let png = try await Self.get(client, "/u/mallory/widget.png?week=2020-07-08")
            #expect(png.status == .ok && png.headers[.contentType] == "image/png")
        }
    }

    @Test func theFramePageMayBeFramedAnywhereAndNothingElseMay() async throws {
        try await Harness.run(demo: true) { _, client in
            for _ in 0..<2 {
                // Twice: the second is the kept page, answered before the router.
                let widget = try await Self.get(client, "/u/demo/widget")
                #expect(widget.status == .ok)
                #expect(widget.headers[.contentType] == "text/html; charset=utf-8")
                #expect(widget.headers[values: .contentSecurityPolicy] == [WidgetRoutes.pagePolicy])
                #expect(WidgetRoutes.pagePolicy.contains("frame-ancestors *") && WidgetRoutes.pagePolicy.contains("script-src 'none'"))
                #expect(widget.headers[Self.frameOptions] == nil)
                #expect(widget.headers[.xContentTypeOptions] == "nosniff")
                let html = String(buffer: widget.body)
                #expect(html.contains("<a class=\"widget-user\" href=\"\(Self.base)/u/demo\" target=\"_blank\" rel=\"noopener\">demo</a>"))
                #expect(!html.contains("<script") && !html.contains("class=\"bar\""))
                #expect(html.components(separatedBy: "<li>").count == 6)
            }
            for uri in ["/u/demo", "/u/demo", "/settings", "/u/demo/widget.png", "/u/demo/widget.png", "/u/demo/widget.svg", "/u/demo/card.png"] {
                let response = try await Self.get(client, uri)
                #expect(response.status == .ok, "\(uri)")
                #expect(response.headers[values: .contentSecurityPolicy].count == 1, "\(uri)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true, "\(uri)")
                #expect(response.headers[Self.frameOptions] == "DENY", "\(uri)")
            }
        }
    }

    @Test func keptWidgetsAreServedUntilTheyExpire() async throws {
        try await Harness.run { harness, client in
            try await KeptAnswersTests.archive(KeptAnswersTests.plays(6), harness)
            let uris = ["/u/offliner/widget?years_ago=3", "/u/offliner/widget.svg?years_ago=3", "/u/offliner/widget.png?years_ago=3"]
            var first: [String: TestResponse] = [:]
            for uri in uris { first[uri] = try await Self.get(client, uri) }
            #expect(String(buffer: first[uris[0]]!.body).containsInOrder(["Offline Album", "Local Artist", "6 plays"]))
            #expect(try SVGReader.read(Data(first[uris[1]]!.body.readableBytesView)).texts.contains("6 plays"))
            func hits() async throws -> Int {
                let health = try JSONSerialization.jsonObject(with: Data(try await client.getOnce("/healthz").body.utf8)) as? [String: Any]
                return (health?["renderedPages"] as? [String: Any])?["hits"] as? Int ?? -1
            }
            let hitsBefore = try await hits()

            // Three more plays reach the archive: the kept widgets are served, headers and all.
            try await KeptAnswersTests.archive(KeptAnswersTests.plays(3, from: 6), harness)
            for uri in uris {
                let kept = try await Self.get(client, uri)
                #expect(kept.body == first[uri]!.body, "\(uri)")
                #expect(kept.headers[.contentSecurityPolicy] == first[uri]!.headers[.contentSecurityPolicy], "\(uri)")
                #expect(kept.headers[Self.frameOptions] == first[uri]!.headers[Self.frameOptions], "\(uri)")
            }
            #expect(try await hits() > hitsBefore)

            // Past the pictures' five minutes (and the page's one): made again, with nine plays.
            harness.clock.advance(days: 301.0 / 86_400)
            let page = try await Self.get(client, uris[0])
            #expect(String(buffer: page.body).contains("9 plays"))
            #expect(page.headers[.contentSecurityPolicy] == WidgetRoutes.pagePolicy)
            #expect(try SVGReader.read(Data(try await Self.get(client, uris[1]).body.readableBytesView)).texts.contains("9 plays"))
            #expect(try await Self.get(client, uris[2]).body != first[uris[2]]!.body)
        }
    }

    @Test func theViewersFilterAppliesAndAnEmptyWeekIsAWidgetSayingSo() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let before = try SVGReader.read(Data(try await Self.get(client, "/u/ybsc/widget.svg?week=2020-07-08").body.readableBytesView))
            #expect(before.texts.contains("Royal Coda"))  // 16 plays
            #expect(try await client.post("/settings", ["filter": "16", "timezone": "UTC"], session: session).status == .seeOther)
            let svg = try SVGReader.read(Data(try await Self.get(client, "/u/ybsc/widget.svg?week=2020-07-08").body.readableBytesView))
            #expect(svg.texts.contains("Paramore") && svg.texts.contains("17 plays"))
            #expect(!svg.texts.contains("Royal Coda"))  // 16 plays: hidden
            #expect(svg.elements.filter { $0.name == "image" }.count == 3, "\(svg.texts)")
            let page = String(buffer: try await Self.get(client, "/u/ybsc/widget?week=2020-07-08").body)
            #expect(page.contains("Paramore") && !page.contains("Royal Coda"))

            // The viewer's time zone labels the week as on the chart page.
            func chartPageWeek() async throws -> String {
                let chart = try await client.get("/u/ybsc?years_ago=3").body
                let start = try #require(chart.range(of: "<p class=\"week-label\">"))
                return String(chart[start.upperBound...].prefix { $0 != "<" })
            }
            func widgetWeek() async throws -> String? {
                try SVGReader.read(Data(try await Self.get(client, "/u/ybsc/widget.svg?years_ago=3").body.readableBytesView)).texts.dropFirst(2).first
            }
            let utc = try await chartPageWeek()
            #expect(try await widgetWeek() == utc)
            #expect(try await client.post("/settings", ["filter": "16", "timezone": "Pacific/Kiritimati"], session: session).status == .seeOther)
            let kiritimati = try await chartPageWeek()
            #expect(kiritimati != utc)
            #expect(try await widgetWeek() == kiritimati)

            let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
            await harness.fake.add(user: "quietone", .scripted(weeks: [week], albums: []))
            for uri in ["/u/quietone/widget.png?years_ago=3", "/u/quietone/widget.svg?years_ago=3", "/u/quietone/widget?years_ago=3"] {
                let empty = try await Self.get(client, uri)
                #expect(empty.status == .ok, "\(uri)")
            }
            let emptySVG = try SVGReader.read(Data(try await Self.get(client, "/u/quietone/widget.svg?years_ago=3").body.readableBytesView))
            #expect(emptySVG.elements.filter { $0.name == "image" }.isEmpty)
            #expect(emptySVG.texts.count > 4, "\(emptySVG.texts)")
        }
    }

    @Test func anUnknownPersonsWidgetSaysSoWithThePagesStatus() async throws {
        try await Harness.run { _, client in
            let png = try await Self.get(client, "/u/nosuchuser/widget.png")
            #expect(png.status == .notFound && png.headers[.contentType] == "image/png")
            #expect(try ImageDecoding(maxSide: 1000).pixels(from: Data(png.body.readableBytesView)).height == 400)
            let svgResponse = try await Self.get(client, "/u/nosuchuser/widget.svg")
            #expect(svgResponse.status == .notFound && svgResponse.headers[.contentType] == "image/svg+xml")
            let svg = try SVGReader.read(Data(svgResponse.body.readableBytesView))
            #expect(svg.texts.joined(separator: " ").contains("was not found"), "\(svg.texts)")
            let page = try await Self.get(client, "/u/nosuchuser/widget")
            #expect(page.status == .notFound)
            #expect(String(buffer: page.body).contains("was not found"))
            #expect(page.headers[.contentSecurityPolicy] == WidgetRoutes.pagePolicy)
        }
    }

    @Test func theChartPageAndSettingsGiveTheCodeToPaste() async throws {
        try await Harness.run(demo: true) { _, client in
            let page = try await client.get("/u/demo?years_ago=2")
            let frame = "&lt;iframe src=&quot;\(Self.base)/u/demo/widget?years_ago=2&quot; width=&quot;300&quot; height=&quot;420&quot;"
            #expect(page.body.contains(frame), "\(page.body)")
            #expect(page.body.contains("&lt;img src=&quot;\(Self.base)/u/demo/widget.png?years_ago=2&quot;"))
            // A week's page that failed offers none.
            #expect(!(try await client.get("/u/nosuchuser").body.contains("widget-snippet")))
        }
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let settings = try await SignInTests.page(client, "/settings", rj)
            #expect(settings.body.contains("&lt;iframe src=&quot;\(Self.base)/u/RJ/widget&quot; width=&quot;300&quot; height=&quot;420&quot;"),
                    "\(settings.body)")
            #expect(settings.body.contains("\(Self.base)/u/RJ/widget.svg"))
        }
    }
}
