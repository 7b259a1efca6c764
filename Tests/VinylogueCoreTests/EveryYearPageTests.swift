import Foundation
import Synchronization
import Testing
import VinylogueCore

@Suite struct EveryYearPageTests {
    let ybsc = CapturedHistory.user, captured = CapturedHistory.week, list = CapturedHistory.list, rows = CapturedHistory.rows
    let now = Date(timeIntervalSince1970: 1_688_800_000)  // Sat 8 Jul 2023

    /// The demo from November 2025: one year for each year of its history
    /// (it starts in January 2011), each the week containing "today, N
    /// years ago", with that week's top five albums.
    @Test func listsTheDemosEveryEarlierYearNearestFirst() async throws {
        let today = Date(timeIntervalSince1970: 1_763_900_000)  // Sun 23 Nov 2025
        let demo = DemoChartSource(clock: .fixed(today))
        let page = await EveryYearPage.load(.init(user: DemoHistory.username), from: demo, now: today)
        #expect(page.state == .loaded)
        #expect(page.years.map(\.yearsAgo) == Array(1...14))
        #expect(page.years.first?.yearsAgoLabel == "1 year ago")
        let finder = ChartWeekFinder(timeZone: .gmt)
        for year in page.years {
            #expect(year.week.contains(Int64(finder.target(yearsAgo: year.yearsAgo, from: today).timeIntervalSince1970)))
            #expect(year.weekLabel == WeekLabels(timeZone: .gmt).label(for: year.week))
            let chart = try await demo.chart(for: DemoHistory.username, kind: .album, week: year.week)
            #expect(year.rows.map(\.entry) == Array(chart.entries.prefix(5)))
            #expect(year.moreCount == chart.entries.count - year.rows.count)
        }
    }

    /// Asked for the last three years (the weekly digest's choice), the
    /// page reads those three weeks' charts and no other: each is a Last.fm
    /// request for a person charted from Last.fm.
    @Test func aFewYearsBackReadsOnlyThoseWeeks() async throws {
        let today = Date(timeIntervalSince1970: 1_763_900_000)  // Sun 23 Nov 2025
        let demo = DemoChartSource(clock: .fixed(today))
        let counted = CountingCharts(demo)
        let page = await EveryYearPage.load(.init(user: DemoHistory.username, yearsBack: 3), from: counted, now: today)
        #expect(page.years.map(\.yearsAgo) == [1, 2, 3])
        #expect(counted.weeksRead.withLock { $0 } == 3)
        let all = await EveryYearPage.load(.init(user: DemoHistory.username), from: demo, now: today)
        #expect(Array(all.years.prefix(3)) == page.years)
    }

    /// A source that counts the weeks whose charts are read.
    final class CountingCharts: ChartSource {
        let source: DemoChartSource
        let weeksRead = Mutex(0)
        init(_ source: DemoChartSource) { self.source = source }
        func chartList(for user: Username) async throws(SourceError) -> ChartWeekList { try await source.chartList(for: user) }
        func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
            weeksRead.withLock { $0 += 1 }
            return try await source.chart(for: user, kind: kind, week: week)
        }
    }

    @Test func showsTheTopRowsTheFilterKeepsAndHowManyMore() async {
        let source = StubChartSource(list: list, charts: [captured: rows])
        let all = await EveryYearPage.load(.init(user: ybsc, rowsPerYear: 2), from: source, now: now)
        #expect(all.years.map(\.yearsAgo) == [3])  // only the captured week has albums
        #expect(all.years.first?.weekLabel == "Week 28 · Jul 5 – 12, 2020")
        #expect(all.years.first?.rows.map(\.playsLabel) == ["22 plays", "20 plays"])
        #expect(all.years.first?.moreText == "and 1 more")
        let filtered = await EveryYearPage.load(.init(user: ybsc, filter: PlayCountFilter(threshold: 1), rowsPerYear: 2), from: source, now: now)
        #expect(filtered.years.first?.rows.count == 2)
        #expect(filtered.years.first?.moreText == nil)
    }

    @Test func yearsTheFilterEmptiesAreLeftOutAndNoneLeftIsEmpty() async {
        let source = StubChartSource(list: list, charts: [captured: rows])
        let page = await EveryYearPage.load(.init(user: ybsc, filter: PlayCountFilter(threshold: 32)), from: source, now: now)
        #expect(page.years.isEmpty)
        #expect(page.state == .empty(message: "No earlier year has albums for this week."))
        #expect(page.emptyText == "No earlier year has albums for this week.")
        #expect(page.failure == nil)
    }

    /// A history that began after this week last year has no earlier year.
    @Test func aHistoryYoungerThanAYearIsEmpty() async {
        let recent = scriptedList(start: 1_680_000_000, script: Array(repeating: 0, count: 12))  // from late March 2023
        let page = await EveryYearPage.load(.init(user: ybsc), from: StubChartSource(list: recent), now: now)
        #expect(page.emptyText == "No earlier year has albums for this week.")
    }

    @Test func aFailureOfTheListOrOfAChartFailsThePage() async {
        let hidden = await EveryYearPage.load(.init(user: ybsc), from: StubChartSource(list: list, failure: .privateProfile(user: "ybsc")), now: now)
        #expect(hidden.state == .failed(.privateProfile(user: "ybsc")))
        #expect(hidden.years.isEmpty && hidden.emptyText == nil)
        let down = await EveryYearPage.load(.init(user: ybsc), from: StubChartSource(list: list, chartFailure: .timeout), now: now)
        #expect(down.failure == .timeout)
    }
}
