import Foundation
import Testing
import VinylogueCore

@Suite struct FeedPageTests {
    let ybsc = CapturedHistory.user, captured = CapturedHistory.week, list = CapturedHistory.list, rows = CapturedHistory.rows
    let july2021 = Date(timeIntervalSince1970: 1_625_738_400)  // Thu 8 Jul 2021, 10:00 UTC

    /// The demo: four entries, one per recent week, newest first, each the
    /// week one year before and dated when the recent week began.
    @Test func carriesTheDemosRecentWeeksOneYearBack() async throws {
        let today = Date(timeIntervalSince1970: 1_763_900_000)  // Sun 23 Nov 2025
        let demo = DemoChartSource(clock: .fixed(today))
        let feed = await FeedPage.load(.init(user: DemoHistory.username), from: demo, now: today)
        #expect(feed.state == .loaded)
        #expect(feed.title == "demo, this week one year ago")
        #expect(feed.entries.count == 4)
        let finder = ChartWeekFinder(timeZone: .gmt)
        for (k, entry) in feed.entries.enumerated() {
            let moment = today.addingTimeInterval(-Double(k) * 7 * 86400)
            #expect(entry.published == LastFMWeekCalendar.week(containing: Int64(moment.timeIntervalSince1970)).fromDate)
            #expect(entry.week.contains(finder.target(yearsAgo: 1, from: moment)))
            #expect(entry.title == "demo, one year ago: " + WeekLabels(timeZone: .gmt).label(for: entry.week))
            let chart = try await demo.chart(for: DemoHistory.username, kind: .album, week: entry.week)
            #expect(entry.rows.map(\.entry) == Array(chart.entries.prefix(10)))
            #expect(entry.summary.split(separator: "\n").count == entry.rows.count)
        }
        #expect(feed.updated == feed.entries.first?.published)
    }

    @Test func anEntrySumsUpTheWeekThroughTheFilter() async {
        let source = StubChartSource(list: list, charts: [captured: rows])
        let feed = await FeedPage.load(.init(user: ybsc, filter: PlayCountFilter(threshold: 1)), from: source, now: july2021)
        let newest = feed.entries.first
        #expect(newest?.title == "ybsc, one year ago: Week 28 · Jul 5 – 12, 2020")
        #expect(newest?.summary == "1. PUP – Live at The Electric Ballroom (22 plays)\n2. CoVet – technicolor (20 plays)")
        #expect(feed.entries.dropFirst().allSatisfy { $0.summary == "No albums that week." })
        let three = await FeedPage.load(.init(user: ybsc, yearsAgo: 3), from: source, now: july2021.addingTimeInterval(2 * 365 * 86400))
        #expect(three.title == "ybsc, this week 3 years ago")
        #expect(three.entries.first?.title == "ybsc, 3 years ago: Week 28 · Jul 5 – 12, 2020")
    }

    /// Long after the history ended there is nothing to carry.
    @Test func aHistoryThatEndedLongAgoGivesAnEmptyFeed() async {
        let later = Date(timeIntervalSince1970: 1_783_512_000)  // 8 Jul 2026
        let feed = await FeedPage.load(.init(user: ybsc), from: StubChartSource(list: list), now: later)
        #expect(feed.state == .empty)
        #expect(feed.entries.isEmpty && feed.updated == later)
    }

    @Test func aFailedListFailsTheFeedAndFailedWeeksAreLeftOut() async {
        let hidden = await FeedPage.load(.init(user: ybsc), from: StubChartSource(list: list, failure: .privateProfile(user: "ybsc")), now: july2021)
        #expect(hidden.failure == .privateProfile(user: "ybsc"))
        #expect(hidden.entries.isEmpty)
        // One week failing costs its entry only.
        let patchy = StubChartSource(list: list, charts: [captured: rows], chartFailure: .timeout, failingWeeks: [captured])
        let feed = await FeedPage.load(.init(user: ybsc), from: patchy, now: july2021)
        #expect(feed.state == .loaded)
        #expect(feed.entries.count == 3 && !feed.entries.contains { $0.week == captured })
        // Every week failing fails the feed.
        let down = await FeedPage.load(.init(user: ybsc), from: StubChartSource(list: list, chartFailure: .timeout), now: july2021)
        #expect(down.failure == .timeout)
    }

    /// A week Last.fm has not answered yet does not drop out and come back
    /// later: the whole feed says to ask again.
    @Test func aWeekStillWaitedForFailsTheWholeFeed() async {
        let slow = StubChartSource(list: list, charts: [captured: rows], chartFailure: .stillWaiting, failingWeeks: [captured])
        let feed = await FeedPage.load(.init(user: ybsc), from: slow, now: july2021)
        #expect(feed.failure == .stillWaiting)
        #expect(feed.entries.isEmpty)
    }
}
