import Foundation
import Testing
import VinylogueCore

/// "Around this time of year" is the week N years ago and two weeks either
/// side, in every earlier year of the history.
@Suite struct RediscoveriesTests {
    let user = try! Username("ybsc")
    let now = Date(timeIntervalSince1970: 1_688_800_000)  // Sat 8 Jul 2023

    /// The week `weeks` after the week containing `now` minus `years` years.
    func week(yearsAgo years: Int, plus weeks: Int) -> ChartWeek {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let then = calendar.date(byAdding: .year, value: -years, to: now)!
        let centre = LastFMWeekCalendar.week(containing: Int64(then.timeIntervalSince1970))
        let from = centre.from + Int64(weeks) * LastFMWeekCalendar.weekLength
        return ChartWeek(from: from, to: from + LastFMWeekCalendar.weekLength)
    }

    /// Five years ago this week nothing charted, the week after an album
    /// was played 12 times: it is offered (it was never looked at, since
    /// only years with a chart in exactly this week were searched).
    @Test func aYearWhoseOnlyPlaysFellTheWeekAfterIsSearched() async throws {
        let after = week(yearsAgo: 5, plus: 1), recent = week(yearsAgo: 0, plus: -2)
        let twoYears = week(yearsAgo: 2, plus: 0)
        let list = ChartWeekList([week(yearsAgo: 6, plus: -4), after, twoYears, recent].sorted { $0.from < $1.from })
        let source = StubChartSource(list: list, charts: [
            after: [ChartEntry(rank: 1, artist: "Low", name: "Things We Lost in the Fire", plays: 12)],
            twoYears: [ChartEntry(rank: 1, artist: "Low", name: "Drums and Guns", plays: 3)],
            recent: [ChartEntry(rank: 1, artist: "PUP", name: "Morbid Stuff", plays: 9)],
        ])
        let found = try await Rediscoveries.load(user: user, now: now, timeZone: .gmt, charts: source)
        #expect(found.finds.map(\.name) == ["Things We Lost in the Fire"])
        #expect(found.finds.first?.yearsAgo == 5 && found.finds.first?.bestWeek == after)
        // The years with a chart within two weeks of this week: 5 and 2.
        #expect(found.yearsSearched == 2)
    }
}

/// Forgotten is judged by the person's own grouping: a reissue played
/// lately is the album (the rule), unless they count spellings apart.
@Suite struct RediscoveriesFoldingTests {
    let user = try! Username("ana")
    let then = ChartWeek(from: 1_371_384_000, to: 1_371_988_800)

    func find(_ folding: AlbumFolding) -> [String] {
        let playedLately: Set<String> = [ScrobbleTally.key(.album, artist: "The Beatles", album: "Abbey Road (Remastered)", track: "",
                                                           folding: folding)!]
        let chart = WeeklyChart(user: user, kind: .album, week: then, entries: [
            ChartEntry(rank: 1, artist: "The Beatles", name: "Abbey Road", plays: 12),
            ChartEntry(rank: 2, artist: "Vetiver", name: "Tidewater", plays: 9),
        ])
        return Rediscoveries.build(user: user, windows: [(10, then)], windowCharts: [chart], playedLately: playedLately, yearsSearched: 1,
                                   folding: folding).finds.map(\.name)
    }

    @Test func aReissuePlayedLatelyIsTheAlbumUnlessSpellingsCountApart() {
        #expect(find(.editions) == ["Tidewater"])
        #expect(find(.asSpelled) == ["Abbey Road", "Tidewater"])
    }
}
