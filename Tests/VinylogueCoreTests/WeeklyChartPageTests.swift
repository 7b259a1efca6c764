import Foundation
import Testing
import VinylogueCore

/// A chart source held in memory.
struct StubChartSource: ChartSource {
    var list: ChartWeekList
    var charts: [ChartWeek: [ChartEntry]] = [:]
    /// How the chart list fails.
    var failure: SourceError?
    /// How the charts of `failingWeeks` (of every week, when nil) fail.
    var chartFailure: SourceError?
    var failingWeeks: Set<ChartWeek>?

    func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        if let failure { throw failure }
        return list
    }

    func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        if let chartFailure, failingWeeks?.contains(week) ?? true { throw chartFailure }
        return WeeklyChart(user: user, kind: kind, week: week, entries: charts[week] ?? [])
    }
}

@Suite struct WeeklyChartPageTests {
    let user = CapturedHistory.user, captured = CapturedHistory.week, list = CapturedHistory.list, rows = CapturedHistory.rows
    let now = Date(timeIntervalSince1970: 1_688_800_000)  // Sat 8 Jul 2023

    @Test func presentsAWeekWithNavigationAndFilter() async {
        let source = StubChartSource(list: list, charts: [captured: rows])
        let request = WeeklyChartPage.Request(user: user, selection: .yearsAgo(3), filter: PlayCountFilter(threshold: 1))
        let page = await WeeklyChartPage.load(request, from: source, now: now)
        #expect(page.state == .chart)
        #expect(page.title == "ybsc")
        #expect(page.week == captured)
        #expect(page.weekLabel == "Week 28 · Jul 5 – 12, 2020")
        #expect(page.yearsAgoLabel == "3 years ago")
        #expect(page.rows.map(\.name) == ["Live at The Electric Ballroom", "technicolor"])
        #expect(page.rows.map(\.playsLabel) == ["22 plays", "20 plays"])
        #expect(page.hiddenCount == 1)
        #expect(page.hiddenText == "1 album with 1 play or fewer is hidden.")
        #expect(page.previous?.label == "2019" && page.previous?.yearsAgo == 4 && page.previous?.isEnabled == true)
        #expect(page.next?.label == "2021" && page.next?.yearsAgo == 2 && page.next?.isEnabled == false)  // the list ends in July 2020
    }

    @Test func anEmptyWeekAndAFilteredOutWeekSaySo() async {
        let source = StubChartSource(list: list, charts: [:])
        let empty = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(3)), from: source, now: now)
        #expect(empty.emptyText == "No albums that week.")
        let filtered = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(3), filter: PlayCountFilter(threshold: 32)),
                                                  from: StubChartSource(list: list, charts: [captured: rows]), now: now)
        #expect(filtered.emptyText == "No albums played more than 32 plays that week.")
    }

    @Test func outsideTheHistoryIsANoChartState() async {
        let source = StubChartSource(list: list)
        let page = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(30)), from: source, now: now)
        guard case .noChart(let message) = page.state else { Issue.record("expected no chart"); return }
        #expect(message.contains("starts in 2005"))
        #expect(page.previous?.isEnabled == false)
    }

    /// A history that ended years ago (the fixture's list stops in July 2020):
    /// from "1 year ago" in 2026, "back" skips the empty years and lands on
    /// 2020, the latest year with charts; "forward" stays disabled.
    @Test func backFromAfterTheHistoryEndedLeadsToItsLatestYear() async {
        let later = Date(timeIntervalSince1970: 1_783_512_000)  // Wed 8 Jul 2026, 12:00 UTC
        let page = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(1)),
                                              from: StubChartSource(list: list, charts: [captured: rows]), now: later)
        guard case .noChart(let message) = page.state else { Issue.record("expected no chart"); return }
        #expect(message.contains("no charts after Jul 12, 2020"))
        #expect(page.previous?.isEnabled == true)
        #expect(page.previous?.label == "2020" && page.previous?.yearsAgo == 6)
        #expect(page.previous?.week == captured)
        #expect(page.next?.isEnabled == false)
        // Following the link shows the chart and navigation continues year by year.
        let there = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(6)),
                                               from: StubChartSource(list: list, charts: [captured: rows]), now: later)
        #expect(there.state == .chart && there.week == captured)
        #expect(there.previous?.label == "2019" && there.previous?.isEnabled == true)
        #expect(there.next?.isEnabled == false)
    }

    /// Before the history starts, "forward" skips ahead to its first year.
    @Test func forwardFromBeforeTheHistoryLeadsToItsFirstYear() async {
        let page = await WeeklyChartPage.load(.init(user: user, selection: .yearsAgo(22)), from: StubChartSource(list: list), now: now)
        #expect(page.previous?.isEnabled == false)
        #expect(page.next?.isEnabled == true)
        #expect(page.next?.label == "2005" && page.next?.yearsAgo == 18)
    }

    /// A dated page in the future leads back to the history; a dated page a
    /// year ago leads forward to this year's week.
    @Test func datedPagesReachThePresentAndComeBackFromTheFuture() async {
        let future = WeekLabels(timeZone: .gmt).parseDay("2030-07-08")!
        let page = await WeeklyChartPage.load(.init(user: user, selection: .containing(future)),
                                              from: StubChartSource(list: list, charts: [captured: rows]), now: now)
        #expect(page.previous?.isEnabled == true && page.previous?.label == "2020")
        #expect(page.previous?.week == captured)
        #expect(page.next?.isEnabled == false)

        // A history that runs up to now: from a date a year ago, forward is this year.
        let current = scriptedList(start: 1_108_296_000, script: Array(repeating: 0, count: 1_000))
        let lastYear = WeekLabels(timeZone: .gmt).parseDay("2022-07-07")!
        let dated = await WeeklyChartPage.load(.init(user: user, selection: .containing(lastYear)), from: StubChartSource(list: current), now: now)
        #expect(dated.next?.isEnabled == true && dated.next?.label == "2023", "\(String(describing: dated.next)) \(dated.target)")
    }

    /// The permalink of the week "N years ago" shows is called "N years
    /// ago" too, whenever it is asked: on Tue 24 Nov 2026 at 12:12 UTC two
    /// years ago fell in the week from Sun 24 Nov 2024 noon, whose permalink
    /// names Mon 25 Nov, and the dated page said "1 year ago" (a browser
    /// test found it at that hour). Every 7 hours over two weeks, 1 to 5 years.
    @Test func aPermalinkIsCalledWhatItsYearsAgoPageIsCalled() {
        let long = scriptedList(start: 1_108_296_000, script: Array(repeating: 0, count: 1_200))
        let labels = WeekLabels(timeZone: .gmt)
        let found = Date(timeIntervalSince1970: 1_795_522_320)  // Tue 24 Nov 2026, 12:12 UTC
        for step in -24..<24 {
            let now = found.addingTimeInterval(Double(step) * 7 * 3600)
            for n in 1...5 {
                let page = WeeklyChartPage.build(.init(user: user, selection: .yearsAgo(n)), now: now, list: long, outcome: .noWeek)
                guard let week = page.week else { Issue.record("no week \(n) years before \(now)"); continue }
                let day = labels.parseDay(labels.permalinkDay(of: week))!
                let dated = WeeklyChartPage.build(.init(user: user, selection: .containing(day)), now: now, list: long, outcome: .noWeek)
                #expect(dated.week == week)
                #expect(dated.yearsAgo == n && dated.yearsAgoLabel == page.yearsAgoLabel, "\(n) years before \(now): \(dated.yearsAgoLabel)")
            }
        }
    }

    /// On Feb 29 every year link lands on exactly the page it names: the
    /// link from N years ago to N+1 targets what the N+1 page targets.
    @Test func yearLinksAgreeWithTheirPagesOnALeapDay() {
        let leapDay = Date(timeIntervalSince1970: 1_835_440_200)  // Tue 29 Feb 2028, 12:30 UTC
        let long = scriptedList(start: 1_108_296_000, script: Array(repeating: 0, count: 1_200))
        for n in 1...8 {
            let page = WeeklyChartPage.build(.init(user: user, selection: .yearsAgo(n)), now: leapDay, list: long, outcome: .noWeek)
            let older = WeeklyChartPage.build(.init(user: user, selection: .yearsAgo(n + 1)), now: leapDay, list: long, outcome: .noWeek)
            #expect(page.previous?.target == older.target, "from \(n) years ago")
            #expect(older.next?.target == page.target, "back from \(n + 1) years ago")
        }
    }

    @Test func aFailureBecomesAPageWithTheSentenceAndNextStep() async {
        let source = StubChartSource(list: list, failure: .notFound(what: "The user “ybsc”"))
        let page = await WeeklyChartPage.load(.init(user: user), from: source, now: now)
        #expect(page.state == .failed(.notFound(what: "The user “ybsc”")))
        #expect(page.failure?.message == "The user “ybsc” was not found on Last.fm.")
        #expect(page.rows.isEmpty && page.previous == nil)
    }

    @Test func aDateSelectsTheWeekContainingIt() async {
        let date = WeekLabels(timeZone: .gmt).parseDay("2020-07-08")!
        let page = await WeeklyChartPage.load(.init(user: user, selection: .containing(date)),
                                              from: StubChartSource(list: list, charts: [captured: rows]), now: now)
        #expect(page.week == captured)
        #expect(page.rows.first?.name == "Live at The Electric Ballroom")
        // Counted from the week's start (Sun 5 Jul 2020, noon) to Sat 8 Jul
        // 2023: three years, as the "3 years ago" page, which shows this week.
        #expect(page.yearsAgo == 3)
    }
}

@Suite struct DemoHistoryTests {
    @Test func isDeterministicAndBelievable() async throws {
        let now = Date(timeIntervalSince1970: 1_763_000_000)
        let a = DemoChartSource(clock: .fixed(now)), b = DemoChartSource(clock: .fixed(now))
        let list = try await a.chartList(for: DemoHistory.username)
        #expect(list.weeks.count > 14 * 52)
        let week = list.weeks[400]
        let chartA = try await a.chart(for: DemoHistory.username, kind: .album, week: week)
        let chartB = try await b.chart(for: DemoHistory.username, kind: .album, week: week)
        #expect(chartA == chartB)
        #expect(chartA.entries.count > 5)
        #expect(chartA.entries.contains { $0.plays == 1 })  // single plays for the filter to hide
        #expect(chartA.entries.first!.plays >= 8)  // something in heavy rotation
        await #expect(throws: SourceError.self) { try await a.chartList(for: try Username("someone")) }
    }

    @Test func scrobblesStayInsideTheirWeek() {
        let history = DemoHistory()
        for i in stride(from: 0, to: 700, by: 37) {
            let week = ChartWeek(from: history.firstWeek.from + Int64(i) * 604_800, to: history.firstWeek.from + Int64(i + 1) * 604_800)
            #expect(history.scrobbles(in: week).allSatisfy { week.contains($0.instant) })
        }
    }
}
