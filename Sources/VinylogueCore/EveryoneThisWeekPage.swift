import Foundation

/// "Everyone, this week": this same week N years ago for every person on a
/// list, side by side: each person's top albums and their #1. The presenter
/// of the everyone page.
///
/// Each person's week is an ordinary `WeeklyChartPage` (same week finding,
/// filter and states), loaded concurrently with at most
/// `Request.concurrentLoads` in flight, so a list of twenty friends costs
/// about as long as its slowest few charts, not the sum of them, and never
/// more requests at once than the limit. One person whose chart fails gets
/// a failed card; the others still show.
public struct EveryoneThisWeekPage: Sendable {
    /// One person's card.
    public struct Person: Sendable {
        public let user: Username
        /// The person's album chart for the week, filtered; its state says
        /// whether there is a chart, an empty week, no week or a failure.
        public let chart: WeeklyChartPage
        /// The top rows whose covers the card shows, at most
        /// `Request.coversPerPerson`.
        public let topRows: [WeeklyChartPage.Row]

        /// The #1 album, when the filter left any.
        public var top: WeeklyChartPage.Row? { chart.rows.first }
        /// Why the person's chart failed, if it did.
        public var failure: SourceError? { chart.failure }
        /// What the card says when there is nothing to show but nothing
        /// failed: an empty week, or no chart that week.
        public var emptyText: String? { chart.emptyText }
    }

    /// The page a year further back or forward.
    public struct YearStep: Sendable, Hashable {
        /// The calendar year of that page's week, "2019".
        public let label: String
        public let yearsAgo: Int
        public let isEnabled: Bool
    }

    public let yearsAgo: Int
    /// "3 years ago"
    public let yearsAgoLabel: String
    /// The instant N years before now whose week everyone's card shows.
    public let target: Date
    /// "Week 28 · Jul 5 – 12, 2020": Last.fm's weeks are the same for
    /// everyone, so one label names every card's week.
    public let weekLabel: String
    /// Everyone on the list, in the list's order.
    public let people: [Person]
    /// N + 1 years ago: enabled when someone's history reaches back there.
    public let previous: YearStep
    /// N − 1 years ago: enabled from two years ago on.
    public let next: YearStep

    /// "Nobody is on your list yet.", for an empty list.
    public var emptyText: String? { people.isEmpty ? "Nobody is on your list yet." : nil }
}

extension EveryoneThisWeekPage {
    /// Whose weeks (in the list's order), how many years ago, the viewer's
    /// filter and time zone, and how much to show and load at once.
    public struct Request: Sendable {
        public var users: [Username]
        public var yearsAgo: Int
        public var filter: PlayCountFilter
        public var timeZone: TimeZone
        /// Covers per card.
        public var coversPerPerson: Int
        /// Charts loaded at the same time, at most.
        public var concurrentLoads: Int

        public init(users: [Username], yearsAgo: Int = 1, filter: PlayCountFilter = .off, timeZone: TimeZone = .gmt,
                    coversPerPerson: Int = 4, concurrentLoads: Int = 6) {
            self.users = users
            self.yearsAgo = yearsAgo
            self.filter = filter
            self.timeZone = timeZone
            self.coversPerPerson = coversPerPerson
            self.concurrentLoads = concurrentLoads
        }

        /// The chart page request for one person.
        func chart(for user: Username) -> WeeklyChartPage.Request {
            WeeklyChartPage.Request(user: user, kind: .album, selection: .yearsAgo(max(1, yearsAgo)), filter: filter, timeZone: timeZone)
        }
    }

    /// Loads every person's album chart for the week, at most
    /// `request.concurrentLoads` at a time, each from the source `sources`
    /// gives for that person (the archive, the demo or Last.fm). Failures
    /// stay on their own card; nothing is thrown.
    public static func load(_ request: Request, sources: @escaping @Sendable (Username) async -> any ChartSource,
                            now: Date) async -> EveryoneThisWeekPage {
        let users = request.users
        let limit = max(1, request.concurrentLoads)
        let charts = await withTaskGroup(of: (Int, WeeklyChartPage).self) { group in
            var loaded = [WeeklyChartPage?](repeating: nil, count: users.count)
            var started = 0
            func startNext() {
                let index = started, user = users[index], asked = request.chart(for: user)
                group.addTask {
                    let source = await sources(user)
                    return (index, await WeeklyChartPage.load(asked, from: source, now: now))
                }
                started += 1
            }
            while started < min(limit, users.count) { startNext() }
            while let (index, chart) = await group.next() {
                loaded[index] = chart
                if started < users.count { startNext() }
            }
            return loaded.compactMap { $0 }
        }
        return build(request, charts: charts, now: now)
    }

    /// Builds the page from loaded charts, one per person in the list's
    /// order (pure).
    public static func build(_ request: Request, charts: [WeeklyChartPage], now: Date) -> EveryoneThisWeekPage {
        let n = max(1, request.yearsAgo)
        let finder = ChartWeekFinder(timeZone: request.timeZone)
        let labels = WeekLabels(timeZone: request.timeZone)
        let target = finder.target(yearsAgo: n, from: now)
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        let people = charts.map { chart in
            Person(user: chart.user, chart: chart, topRows: Array(chart.rows.prefix(max(0, request.coversPerPerson))))
        }
        // Someone's history goes back further when their own page offers
        // a year before this one.
        let reachesBack = charts.contains { $0.previous?.isEnabled == true }
        func step(_ years: Int, enabled: Bool) -> YearStep {
            let instant = years >= 1 ? finder.target(yearsAgo: years, from: now) : now
            return YearStep(label: String(labels.year(of: instant)), yearsAgo: years, isEnabled: enabled)
        }
        return EveryoneThisWeekPage(
            yearsAgo: n, yearsAgoLabel: WeekLabels.yearsAgo(n), target: target, weekLabel: labels.label(for: week), people: people,
            previous: step(n + 1, enabled: reachesBack && n < maxYearsAgo), next: step(n - 1, enabled: n > 1))
    }

    /// The furthest back the page goes (the chart pages' own limit).
    public static let maxYearsAgo = 100
}
