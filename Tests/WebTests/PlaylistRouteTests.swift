import Foundation
@testable import HTTPServing
import HummingbirdTesting
import Testing
import VinylogueCore
@testable import Web

/// `/u/{user}/playlist/{N}.xspf` and `.jspf`: the demo's week two years
/// before the harness's clock, against its own generated scrobbles and
/// the chart the same week's JSON gives; the links on the chart page;
/// addresses that name no playlist, a person Last.fm does not know, one
/// charted from Last.fm.
@Suite struct PlaylistRouteTests {
    /// The `<tag>` texts of `xml`, in order, unescaped.
    static func texts(_ tag: String, in xml: String) -> [String] {
        xml.components(separatedBy: "<\(tag)>").dropFirst().compactMap { $0.components(separatedBy: "</\(tag)>").first }.map {
            $0.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    @Test func theDemosWeekTwoYearsAgoAsXSPFAndJSPF() async throws {
        let week = LastFMWeekCalendar.week(containing: Int64(ChartWeekFinder(timeZone: .current).target(yearsAgo: 2, from: july2023)
            .timeIntervalSince1970.rounded(.down)))
        // Independently: each track played from an album that week, once.
        let expected = Set(DemoHistory().scrobbles(in: week).filter { !$0.album.isEmpty }.map { $0.artist.lowercased() + "|" + $0.track.lowercased() })
        try await Harness.run(demo: true) { _, client in
            let chart = try await client.get("/u/demo?years_ago=2")
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2.xspf\" download>XSPF playlist</a>"), "\(chart.body.prefix(3000))")
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2.jspf\" download>"))
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2\">on your music server</a>"))
            // Every year's week, too.
            let history = try await client.get("/u/demo/history")
            #expect(history.body.contains("<a href=\"/u/demo/playlist/2\">play it again</a>"), "\(history.body.prefix(3000))")
            #expect(!(try await client.get("/u/demo/history?kind=artist").body.contains("play it again")))

            let xspf = try await client.get("/u/demo/playlist/2.xspf")
            #expect(xspf.status == .ok)
            #expect(xspf.headers[.contentType] == "application/xspf+xml; charset=utf-8")
            #expect(xspf.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"vinylogue-demo-") == true)
            #expect(xspf.body.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">"))
            let titles = Self.texts("title", in: xspf.body).dropFirst(), creators = Self.texts("creator", in: xspf.body).dropFirst()
            let found = zip(creators, titles).map { $0.0.lowercased() + "|" + $0.1.lowercased() }
            #expect(found.count == expected.count && Set(found) == expected)
            // Albums come in the week's chart order.
            let api = try await client.get("/api/u/demo/chart?week=\(WeekLabels(timeZone: .current).permalinkDay(of: week))")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? [String: Any])
            let order = try #require(json["entries"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            var albums: [String] = []
            for album in Self.texts("album", in: xspf.body) where albums.last != album { albums.append(album) }
            #expect(albums == order)

            let jspf = try await client.get("/u/demo/playlist/2.jspf")
            #expect(jspf.headers[.contentType] == "application/jspf+json; charset=utf-8")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(jspf.body.utf8)) as? [String: Any])
            let tracks = try #require((object["playlist"] as? [String: Any])?["track"] as? [[String: Any]])
            #expect(tracks.count == expected.count)
            #expect((object["playlist"] as? [String: Any])?["title"] as? String == "Vinylogue — this week, 2 years ago")
        }
    }

    @Test func addressesThatNameNoPlaylistAndPeopleWithoutAnArchive() async throws {
        try await Harness.run(demo: true) { _, client in
            for bad in ["/u/demo/playlist/0.xspf", "/u/demo/playlist/2.m3u", "/u/demo/playlist/two.xspf", "/u/demo/playlist/2x",
                        "/u/demo/playlist/99999.xspf", "/u/demo/playlist/2.xspf.jspf"] {
                let answer = try await client.get(bad)
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(answer.body.contains("This address names no playlist"))
            }
            #expect(try await client.get("/u/nosuchuser/playlist/1.xspf").status == .notFound)
            let lastFM = try await client.get("/u/ybsc/playlist/1.xspf")
            #expect(lastFM.status == .conflict)
            #expect(lastFM.body.contains("made from Vinylogue’s own copy of ybsc’s history"))
            #expect(!(try await client.get("/u/ybsc").body.contains("/playlist/")))
            #expect(!(try await client.get("/u/ybsc/history").body.contains("/playlist/")))
            // Long ago, before the demo's history: nothing to play.
            let early = try await client.get("/u/demo/playlist/40.xspf")
            #expect(early.status == .notFound)
            #expect(early.body.contains("played nothing this week 40 years ago"))
        }
    }
}
