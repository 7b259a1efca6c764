import Foundation
@testable import HTTPServing
import Hummingbird
import HummingbirdTesting
@testable import ListenIngest
import Testing
import VinylogueCore
@testable import Web

/// The album page's life of an album and the rediscover page, for the
/// demo (an archived user), against counts of the demo's own scrobbles.
@Suite struct AlbumLifeRouteTests {
    /// Every demo week up to the harness's clock, with its scrobbles.
    static let weeks: [(ChartWeek, [Scrobble])] = {
        let history = DemoHistory()
        return history.chartList(now: Int64(july2023.timeIntervalSince1970)).weeks.map { ($0, history.scrobbles(in: $0)) }
    }()

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test func theAlbumPageShowsTheAlbumsWholeLife() async throws {
        // The demo's #1 album three years before the clock.
        let target = ChartWeekFinder(timeZone: .current).target(yearsAgo: 3, from: july2023)
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        let top = try #require(ScrobbleTally.chart(.album, user: DemoHistory.username, week: week,
                                                   scrobbles: DemoHistory().scrobbles(in: week)).entries.first)
        let key = ScrobbleTally.key(.album, artist: top.artist, album: top.name, track: "")
        var totalPlays = 0, weeksWithPlays = 0
        var playsPerYear: [Int: Int] = [:]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        for (week, scrobbles) in Self.weeks {
            let plays = scrobbles.filter { ScrobbleTally.key(.album, artist: $0.artist, album: $0.album, track: "") == key }.count
            guard plays > 0 else { continue }
            totalPlays += plays
            weeksWithPlays += 1
            playsPerYear[calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval(week.from))), default: 0] += plays
        }
        let (total, weeksPlayed, perYear) = (totalPlays, weeksWithPlays, playsPerYear)
        try await Harness.run(demo: true) { _, client in
            let day = WeekLabels(timeZone: .current).isoDay(target)
            // Asked in another case: the same album.
            let path = "/u/demo/album/\(Self.segment(top.artist.uppercased()))/\(Self.segment(top.name.lowercased()))?week=\(day)"
            let page = try await client.get(path)
            #expect(page.body.contains("In demo’s listening"))
            #expect(page.body.containsInOrder(["<dt>Plays</dt>", WeekLabels.plays(total)]))
            #expect(page.body.contains("\(weeksPlayed) weeks"))
            #expect(page.body.containsInOrder(["Then:", WeekLabels.plays(top.plays)]))
            // The chart: an image with a name that says every year, and a table as its text alternative.
            #expect(page.body.contains("<svg viewBox=\"0 0 600 160\" role=\"img\" aria-labelledby=\"plays-per-year-title\""))
            let summary = "Plays per year: " + (perYear.keys.min()!...perYear.keys.max()!).map { "\($0): \(perYear[$0] ?? 0)" }.joined(separator: ", ")
            #expect(page.body.contains("<title id=\"plays-per-year-title\">\(summary)</title>"))
            for (year, plays) in perYear { #expect(page.body.contains("<tr><th scope=\"row\">\(year)</th><td>\(plays)</td></tr>")) }
            // The best week links to its chart.
            #expect(page.body.contains("Best rank</dt><dd><a href=\"/u/demo/week/"))
        }
    }

    @Test func rediscoverListsFavouritesNotPlayedForAYear() async throws {
        try await Harness.run(demo: true) { _, client in
            let page = try await client.get("/u/demo/rediscover")
            #expect(page.status == .ok)
            #expect(page.body.contains("played at least \(Rediscoveries.minimumPlays) times within \(Rediscoveries.windowWeeks) weeks of this week"))
            let finds = page.body.components(separatedBy: "<span class=\"artist\">").dropFirst().map { part in
                let artist = String(part.prefix { $0 != "<" })
                let album = part.components(separatedBy: "<span class=\"album\">").dropFirst().first.map { String($0.prefix { $0 != "<" }) } ?? ""
                return (artist + "\u{1F}" + album).lowercased()
            }
            #expect(!finds.isEmpty)
            // None of them was played in the twelve months before the clock.
            let yearAgo = july2023.timeIntervalSince1970 - 365 * 86_400
            let lately = Set(Self.weeks.filter { Double($0.0.to) > yearAgo }.flatMap(\.1).map {
                ($0.artist.escapedForHTML + "\u{1F}" + $0.album.escapedForHTML).lowercased()
            })
            let playedLately = finds.filter(lately.contains)
            #expect(playedLately.isEmpty, "played in the last 12 months: \(playedLately)")
            #expect(page.body.contains("best <a href=\"/u/demo/week/"))
            #expect(try await client.get("/u/not%20valid!/rediscover").status == .badRequest)
        }
    }
}

/// The plays-per-year chart as drawn.
@Suite struct AlbumLifeChartTests {
    /// An album of a single year drew one 420-px block across the chart.
    @Test func aSingleYearIsABarNotABlock() throws {
        let week = LastFMWeekCalendar.week(containing: 1_600_000_000)
        let life = try #require(AlbumLife.build(user: try Username("ybsc"), weeks: [AlbumWeek(week: week, plays: 9, rank: 1, artist: "Low", name: "C'mon")],
                                                week: nil, now: Date(timeIntervalSince1970: 1_700_000_000), timeZone: .gmt))
        let view = AlbumLifeView(life, labels: WeekLabels(timeZone: .gmt))
        let bar = try #require(view.bars.first)
        #expect(view.bars.count == 1 && bar.width <= 48, "\(bar.width) px wide")
        #expect(bar.x + bar.width / 2 == AlbumLifeView.chartWidth / 2, "centred")
    }
}
