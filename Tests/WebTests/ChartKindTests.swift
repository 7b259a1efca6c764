import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VinylogueCore

/// Artist and track charts on the web (`?kind=`): the rows are the same
/// tally the demo's own scrobbles give, and every link on the page keeps
/// the kind, while album pages keep today's addresses.
@Suite struct ChartKindTests {
    /// The demo's week containing 8 July 2020 (the dated pages below).
    let week = LastFMWeekCalendar.week(containing: 1_594_209_600)

    /// One demo server for every check below: filling the demo's archive
    /// is the costly part of a demo harness, and six of them at once slowed
    /// a loaded full run past other tests' patience.
    @Test func artistAndTrackChartsOnTheWeb() async throws {
        try await Harness.run(demo: true) { _, client in
            try await theArtistChartOfADemoWeekIsTheTallyOfItsScrobbles(client)
            try await trackRowsShowTheTrackAndItsArtist(client)
            try await everyLinkKeepsTheKind(client)
            try await theEveryYearPageAndItsJSONFollowTheKind(client)
            try await anUnknownKindIsRefusedWithASentence(client)
            try await renderedPagesAreKeptPerKind(client)
        }
    }

    func expected(_ kind: ChartKind) -> [ChartEntry] {
        ScrobbleTally.chart(kind, user: DemoHistory.username, week: week, scrobbles: DemoHistory().scrobbles(in: week)).entries
    }

    /// The texts of `class="name"` spans, in page order.
    func spans(_ name: String, in body: String) throws -> [String] {
        try captures("<span class=\"\(name)\">([^<]*)</span>", in: body)
    }

    func theArtistChartOfADemoWeekIsTheTallyOfItsScrobbles(_ client: any TestClientProtocol) async throws {
        do {
            let artists = expected(.artist)
            #expect(artists.count > 3)
            let page = try await client.get("/u/demo/week/2020-07-08?kind=artist")
            #expect(page.status == .ok)
            #expect(try spans("album", in: page.body) == artists.map(\.name.escapedForHTML))
            #expect(try spans("plays", in: page.body) == artists.map { WeekLabels.plays($0.plays) })
            // No cover is asked for: a lettered square stands in, and the row goes to Last.fm.
            #expect(!page.body.contains("/cover/"))
            #expect(page.body.contains("class=\"art monogram hue-"))
            #expect(page.body.contains("href=\"https://www.last.fm/music/"))
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo/week/2020-07-08?kind=artist\" aria-current=\"page\">Artists</a>"))
        }
    }

    func trackRowsShowTheTrackAndItsArtist(_ client: any TestClientProtocol) async throws {
        do {
            let tracks = expected(.track)
            let page = try await client.get("/u/demo/week/2020-07-08?kind=track")
            #expect(page.status == .ok)
            #expect(try spans("album", in: page.body) == tracks.map(\.name.escapedForHTML))
            #expect(try spans("artist", in: page.body) == tracks.map(\.artist.escapedForHTML))
            #expect(page.body.contains("Tracks</a>"))
            // The JSON says the same.
            let api = try await client.get("/api/u/demo/chart?week=2020-07-08&kind=track")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? [String: Any])
            #expect(json["kind"] as? String == "track")
            let entries = try #require(json["entries"] as? [[String: Any]])
            #expect(entries.map { $0["name"] as? String } == tracks.map(\.name))
            #expect(entries.map { $0["plays"] as? Int } == tracks.map(\.plays))
        }
    }

    func everyLinkKeepsTheKind(_ client: any TestClientProtocol) async throws {
        do {
            let page = try await client.get("/u/demo?years_ago=3&kind=track")
            #expect(page.status == .ok)
            #expect(page.body.contains("href=\"/u/demo?years_ago=4&amp;kind=track\" rel=\"prev\""))
            #expect(page.body.contains("href=\"/u/demo?years_ago=2&amp;kind=track\" rel=\"next\""))
            #expect(page.body.contains("data-prev-url=\"/u/demo?years_ago=4&amp;kind=track\""))
            #expect(page.body.contains("href=\"/u/demo/history?kind=track\""))
            // The switcher: three links, the current one marked, albums at today's address.
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo?years_ago=3\">Albums</a>"))
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo?years_ago=3&amp;kind=artist\">Artists</a>"))
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo?years_ago=3&amp;kind=track\" aria-current=\"page\">Tracks</a>"))
            #expect(page.body.components(separatedBy: "aria-current=").count == 2)
            // The filter form keeps the kind and the years.
            #expect(page.body.contains("<input type=\"hidden\" name=\"kind\" value=\"track\">"))
            #expect(page.body.contains("<input type=\"hidden\" name=\"years_ago\" value=\"3\">"))
            // The share permalink and its card are the dated week, of tracks.
            let share = try #require(try captures(#"og:url" content="([^"]*)""#, in: page.body).first)
            #expect(share.hasSuffix("?kind=track") && share.contains("/u/demo/week/"))
            #expect(page.body.contains("/card.png?kind=track\""))
            let image = try #require(try captures(#"og:image" content="([^"]*)""#, in: page.body).first)
            #expect(image == share.replacingOccurrences(of: "?kind=track", with: "/card.png?kind=track"))
            let card = try await client.get(String(image.dropFirst("http://127.0.0.1:8080".count)))
            #expect(card.status == .ok)
            #expect(card.headers[.contentType] == "image/png")
            #expect(try await client.get("/u/demo/history/card.png?kind=artist").headers[.contentType] == "image/png")
            #expect(try await client.get("/u/demo/history/card.png?kind=genre").status == .badRequest)

            // A dated page's year links stay dated, with the kind.
            let dated = try await client.get("/u/demo/week/2020-07-08?kind=artist")
            #expect(dated.body.contains("href=\"/u/demo/week/2019-07-08?kind=artist\" rel=\"prev\""))

            // A filter asked for in the address is kept too, and applied.
            let filtered = try await client.get("/u/demo?years_ago=3&kind=artist&min_plays=2")
            #expect(filtered.body.contains("href=\"/u/demo?years_ago=4&amp;kind=artist&amp;min_plays=2\" rel=\"prev\""))
            #expect(try spans("plays", in: filtered.body).allSatisfy { !["1 play", "2 plays"].contains($0) })
            #expect(filtered.body.contains("<option value=\"2\" selected>"))

            // Albums keep today's addresses.
            let albums = try await client.get("/u/demo?years_ago=3")
            #expect(albums.body.contains("href=\"/u/demo?years_ago=4\" rel=\"prev\""))
            #expect(albums.body.contains("href=\"/u/demo/history\""))
            #expect(!albums.body.contains("kind=album"))
            #expect(albums.body.contains("/cover/"))
        }
    }

    func theEveryYearPageAndItsJSONFollowTheKind(_ client: any TestClientProtocol) async throws {
        do {
            let page = try await client.get("/u/demo/history?kind=artist")
            #expect(page.status == .ok)
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo/history?kind=artist\" aria-current=\"page\">Artists</a>"))
            #expect(page.body.contains("<a class=\"kind\" href=\"/u/demo/history\">Albums</a>"))
            #expect(try captures(#"href="/u/demo/week/(\d{4}-\d{2}-\d{2})\?kind=artist""#, in: page.body).count > 3)
            #expect(page.body.contains("href=\"/u/demo?kind=artist\" class=\"username\""))
            #expect(!page.body.contains("/cover/"))

            let api = try await client.get("/api/u/demo/history?kind=artist")
            #expect(api.status == .ok)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? [String: Any])
            #expect(json["kind"] as? String == "artist")
            let years = try #require(json["years"] as? [[String: Any]])
            let first = try #require(years.first)
            let from = try #require((first["week"] as? [String: Int])?["from"])
            let week = ChartWeek(from: Int64(from), to: Int64(from) + LastFMWeekCalendar.weekLength)
            let tally = ScrobbleTally.chart(.artist, user: DemoHistory.username, week: week, scrobbles: DemoHistory().scrobbles(in: week))
            let entries = try #require(first["entries"] as? [[String: Any]])
            #expect(entries.map { $0["name"] as? String } == tally.entries.prefix(5).map(\.name))
        }
    }

    func anUnknownKindIsRefusedWithASentence(_ client: any TestClientProtocol) async throws {
        do {
            let page = try await client.get("/u/demo?kind=albums")
            #expect(page.status == .badRequest)
            #expect(page.body.contains("“albums” is not a kind of chart. Use kind=album, kind=artist or kind=track."))
            let api = try await client.get("/api/u/demo/chart?kind=%3Cb%3E")
            #expect(api.status == .badRequest)
            #expect(api.body.contains("is not a kind of chart"))
            let hostile = try await client.get("/u/demo?kind=%3Cb%3E")
            #expect(hostile.status == .badRequest)
            #expect(hostile.body.contains("“&lt;b&gt;” is not a kind of chart"))
            #expect(try await client.get("/u/demo/history?kind=genre").status == .badRequest)
            #expect(try await client.get("/api/u/demo/history?kind=genre").status == .badRequest)
            // Case does not matter; an empty kind is albums.
            #expect(try await client.get("/u/demo?kind=Artist").body.contains("aria-current=\"page\">Artists</a>"))
            #expect(try await client.get("/u/demo?kind=").body.contains("aria-current=\"page\">Albums</a>"))
        }
    }

    /// Rendered pages are kept per kind: the artist page asked for right
    /// after the album page of the same week is the artist page.
    func renderedPagesAreKeptPerKind(_ client: any TestClientProtocol) async throws {
        do {
            for kind in ["", "&kind=artist", "&kind=track", ""] {
                let page = try await client.get("/u/demo?years_ago=2" + kind)
                let current = kind.isEmpty ? "Albums" : kind.hasSuffix("artist") ? "Artists" : "Tracks"
                #expect(page.body.contains("aria-current=\"page\">\(current)</a>"))
            }
            let withFilter = try await client.get("/u/demo?years_ago=2&min_plays=0")
            #expect(withFilter.body.contains("href=\"/u/demo?years_ago=3&amp;min_plays=0\" rel=\"prev\""))
            let without = try await client.get("/u/demo?years_ago=2")
            #expect(without.body.contains("href=\"/u/demo?years_ago=3\" rel=\"prev\""))
        }
    }
}

/// The first capture group of every match of `pattern` in `text`.
func captures(_ pattern: String, in text: String) throws -> [String] {
    let regex = try Regex(pattern)
    return text.matches(of: regex).compactMap { $0.output[1].substring.map(String.init) }
}

extension String {
    /// As the templates write it.
    var escapedForHTML: String {
        var out = ""
        for c in self {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
