import Foundation
@testable import HTTPServing
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Stores
import Testing
import VinylogueCore
@testable import Web

/// `/u/{user}/year/{YYYY}` and its JSON: the demo's year against a count
/// of its own scrobbles; the way between years and the links to a year;
/// a year without listens, an address that is no year, a person Last.fm
/// does not know, and one charted from Last.fm (no archive to count).
@Suite struct YearRouteTests {
    /// The demo's listens in `year` of the server's zone (the harness's viewer sets none).
    static func demoPlays(in year: Int, before limit: Date = july2023) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let history = DemoHistory()
        return history.chartList(now: Int64(july2023.timeIntervalSince1970)).weeks.flatMap { history.scrobbles(in: $0) }.filter {
            $0.instant < Int64(limit.timeIntervalSince1970)
                && calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval($0.instant))) == year
        }.count
    }

    /// The year under way (2023 at the harness's 8 July): counted up to
    /// now, compared with 2022 up to the same moment, its months ahead
    /// said to be ahead.
    @Test func theYearUnderWayComparesWithTheYearBeforeByThisDate() async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let yearAgo = try #require(calendar.date(byAdding: .year, value: -1, to: july2023))
        let plays = Self.demoPlays(in: 2023), before = Self.demoPlays(in: 2022, before: yearAgo)
        try await Harness.run(demo: true) { _, client in
            let json = try await client.get("/api/u/demo/year/2023")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])
            #expect((object["totals"] as? [String: Any])?["plays"] as? Int == plays)
            #expect(object["previousPlays"] as? Int == before, "the year before up to the same moment")
            #expect(object["through"] as? Int == Int(july2023.timeIntervalSince1970))
            let page = try await client.get("/u/demo/year/2023")
            #expect(page.body.contains("By this date, "), "\(page.body.prefix(3000))")
            #expect(page.body.containsInOrder(["July", "August", "still to come", "December", "still to come"]))
            #expect(!page.body.containsInOrder(["June", "still to come", "July"]))
        }
    }

    @Test func theDemosYearCountsItsListensAndLinksTheYearsAround() async throws {
        let plays = Self.demoPlays(in: 2022), before = Self.demoPlays(in: 2021)
        try await Harness.run(demo: true) { _, client in
            let page = try await client.get("/u/demo/year/2022")
            #expect(page.status == .ok)
            #expect(page.body.contains("<p class=\"years-ago\">2022</p>"))
            #expect(page.body.contains("\(grouped(plays)) plays of "), "\(page.body.prefix(2000))")
            #expect(page.body.containsInOrder(["Top albums", "Found this year", "Each month’s album", "January", "December", "Top artists", "Top tracks"]))
            #expect(page.body.contains("href=\"/u/demo/year/2021\" rel=\"prev\">← 2021</a>"))
            #expect(page.body.contains("href=\"/u/demo/year/2023\" rel=\"next\">2023 →</a>"))
            #expect(page.body.contains("<svg viewBox=\"0 0 600 120\" role=\"img\" aria-labelledby=\"weekdays-title\""))
            #expect(page.body.contains("<svg viewBox=\"0 0 600 120\" role=\"img\" aria-labelledby=\"hours-title\""))
            // Kept: the same answer again.
            let again = try await client.get("/u/demo/year/2022")
            #expect(again.body == page.body)

            let json = try await client.get("/api/u/demo/year/2022")
            #expect(json.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])
            #expect((object["totals"] as? [String: Any])?["plays"] as? Int == plays)
            #expect(object["previousPlays"] as? Int == before)
            #expect(object["previousYear"] as? Int == 2021 && object["nextYear"] as? Int == 2023)
            #expect((object["months"] as? [[String: Any]])?.compactMap { $0["plays"] as? Int }.reduce(0, +) == plays)
            #expect((object["hours"] as? [Int])?.reduce(0, +) == plays)
            #expect((object["weekdays"] as? [[String: Any]])?.first?["day"] as? String == "Monday")

            // A year is linked from the week's chart, every year and the album page.
            #expect(try await client.get("/u/demo").body.contains("<a href=\"/u/demo/year/2022\">2022 in review</a>"))
            #expect(try await client.get("/u/demo/history").body.contains("<a href=\"/u/demo/year/2022\">2022 in review</a>"))
        }
    }

    @Test func aYearWithoutListensAndAnAddressThatIsNoYear() async throws {
        try await Harness.run(demo: true) { _, client in
            let empty = try await client.get("/u/demo/year/1999")
            #expect(empty.status == .ok)
            #expect(empty.body.contains("demo played nothing in 1999. Their history runs from"), "\(empty.body)")
            #expect(empty.body.contains("rel=\"next\""))
            #expect(!empty.body.contains("rel=\"prev\""))
            for bad in ["22", "20222", "abcd", "2022x", "0999"] {
                let page = try await client.get("/u/demo/year/\(bad)")
                #expect(page.status == .badRequest, "\(bad)")
                #expect(page.body.contains("is not a year. Use four digits, as in /year/2019."), "\(bad)")
                let json = try await client.get("/api/u/demo/year/\(bad)")
                #expect(json.status == .badRequest, "\(bad)")
                #expect(json.body.contains("is not a year"), "\(bad)")
            }
        }
    }

    @Test func someoneLastFMDoesNotKnowAndSomeoneChartedFromLastFM() async throws {
        try await Harness.run { _, client in
            // Their pages link no year: it could not be counted.
            #expect(!(try await client.get("/u/ybsc").body.contains(" in review</a>")))
            #expect(!(try await client.get("/u/ybsc/history").body.contains(" in review</a>")))
            let unknown = try await client.get("/u/nosuchuser/year/2022")
            #expect(unknown.status == .notFound)
            #expect(try await client.get("/api/u/nosuchuser/year/2022").status == .notFound)
            // ybsc is on Last.fm, and this Vinylogue copies nobody's history.
            let page = try await client.get("/u/ybsc/year/2022")
            #expect(page.status == .ok)
            #expect(page.body.contains("A year’s page is counted from Vinylogue’s own copy of ybsc’s history, and it holds none yet."), "\(page.body)")
            let json = try await client.get("/api/u/ybsc/year/2022")
            #expect(json.status == .conflict)
            #expect(json.body.contains("holds none yet"))
        }
    }
}

/// Every year's page shows the person's anniversaries under each year's
/// week and their rituals above: planted in an archived person's history
/// around the harness's clock (8 July 2023).
@Suite struct AnniversaryRouteTests {
    static func week(_ yearsAgo: Int, shifted: Int = 0) -> ChartWeek {
        let target = ChartWeekFinder(timeZone: .current).target(yearsAgo: yearsAgo, from: july2023)
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        let length = LastFMWeekCalendar.weekLength * Int64(shifted)
        return ChartWeek(from: week.from + length, to: week.to + length)
    }

    @Test func everyYearShowsAnniversariesAndRituals() async throws {
        try await Harness.run { harness, client in
            var listens: [Scrobble] = []
            func play(_ artist: String, _ album: String, in week: ChartWeek, _ count: Int) {
                for n in 0..<count { listens.append(Scrobble(instant: week.from + 7_200 + Int64(n) * 300, artist: artist, album: album, track: "T\(n)")) }
            }
            play("Vetiver", "Tidewater", in: Self.week(10), 6)
            play("Vetiver", "Tidewater", in: Self.week(4), 2)
            play("Lower Dens", "Nootropics", in: Self.week(7), 3)
            play("Lower Dens", "Nootropics", in: Self.week(5), 4)
            play("Grouper", "Ruins", in: Self.week(9, shifted: 1), 5)
            play("Grouper", "Ruins", in: Self.week(6), 4)
            play("Grouper", "Ruins", in: Self.week(2, shifted: -1), 3)
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens, of: try Username("Vera"), origin: .lastFMExport)
            let page = try await client.get("/u/Vera/history")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["Vera’s early-July albums, year after year", "Ruins by Grouper: 2014, 2017 and 2021",
                                               "5 years ago", "Last played five years ago this week: Nootropics by Lower Dens",
                                               "10 years ago", "First played ten years ago this week: Tidewater by Vetiver"]), "\(page.body)")
            #expect(!page.body.contains("Last played ten years ago"))
            // The week's own page, N years ago, says its anniversaries; another year's says none.
            let ten = try await client.get("/u/Vera?years_ago=10")
            #expect(ten.body.contains("First played ten years ago this week: Tidewater by Vetiver"), "\(ten.body)")
            #expect(try await client.get("/u/Vera?years_ago=5").body.contains("Last played five years ago this week: Nootropics by Lower Dens"))
            #expect(!(try await client.get("/u/Vera?years_ago=7").body.contains("class=\"moments\"")))
            // The feed's newest entry carries them too.
            let feed = try await client.get("/u/Vera/feed.atom?years_ago=4")
            #expect(feed.status == .ok)
            #expect(feed.body.containsInOrder(["<entry>", "First played ten years ago this week: Tidewater by Vetiver",
                                               "Vera’s early-July album: Ruins by Grouper, played in 2014, 2017 and 2021", "</entry>"]), "\(feed.body)")
            // Not on a chart of artists.
            #expect(!(try await client.get("/u/Vera/history?kind=artist").body.contains("First played")))
        }
    }
}
