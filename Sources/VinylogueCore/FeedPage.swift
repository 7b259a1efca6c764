import Foundation

/// "This week, N years ago" as a feed: one entry for each recent week, the
/// newest first, each showing that week N years earlier. The presenter of
/// the Atom feed (the notification the original app planned and never
/// shipped).
public struct FeedPage: Sendable {
    /// One recent week's entry.
    public struct Entry: Sendable, Hashable {
        /// The week N years before the recent week.
        public let week: ChartWeek
        /// When the recent week began: the entry's date.
        public let published: Date
        /// "ybsc, one year ago: Week 28 · Jul 5 – 12, 2020"
        public let title: String
        /// The top rows the filter kept, at most `Request.rowsPerEntry`.
        public let rows: [WeeklyChartPage.Row]
        /// One line per row ("1. PUP – Live at The Electric Ballroom
        /// (22 plays)"), or "No albums that week."
        public let summary: String
    }

    /// What the feed carries.
    public enum State: Sendable, Hashable {
        /// At least one entry.
        case loaded
        /// None of the recent weeks has a week N years earlier.
        case empty
        /// The source failed.
        case failed(SourceError)
    }

    public let user: Username
    public let yearsAgo: Int
    public let state: State
    /// "ybsc, this week one year ago"
    public let title: String
    /// The newest entry's date, or `now` when there is none.
    public let updated: Date
    /// Newest first.
    public let entries: [Entry]

    /// Why the feed failed, when the state is `.failed`.
    public var failure: SourceError? {
        if case .failed(let error) = state { return error }
        return nil
    }
}

extension FeedPage {
    /// Whose feed, how many years back, the filter, how much of it, and the
    /// person's time zone.
    public struct Request: Sendable {
        public var user: Username
        public var yearsAgo: Int
        public var filter: PlayCountFilter
        /// How many recent weeks the feed carries.
        public var weeks: Int
        public var rowsPerEntry: Int
        public var timeZone: TimeZone

        public init(user: Username, yearsAgo: Int = 1, filter: PlayCountFilter = .off, weeks: Int = 4, rowsPerEntry: Int = 10,
                    timeZone: TimeZone = .gmt) {
            self.user = user
            self.yearsAgo = max(1, yearsAgo)
            self.filter = filter
            self.weeks = weeks
            self.rowsPerEntry = rowsPerEntry
            self.timeZone = timeZone
        }
    }

    /// Loads the chart list and each recent week's chart N years back from
    /// `source`. A week whose chart fails is left out (a feed reader asks
    /// again later); the feed fails only when the list does, when every
    /// week it would carry failed, or when Last.fm is still being waited for
    /// (`stillWaiting`: the whole feed is asked for again, so entries never
    /// vanish and return).
    public static func load(_ request: Request, from source: some ChartSource, now: Date) async -> FeedPage {
        let list: ChartWeekList
        do {
            list = try await source.chartList(for: request.user)
        } catch {
            return build(request, now: now, entries: [], failure: error)
        }
        let finder = ChartWeekFinder(timeZone: request.timeZone)
        let labels = WeekLabels(timeZone: request.timeZone)
        var entries: [Entry] = []
        var failure: SourceError?
        for k in 0..<max(0, request.weeks) {
            let moment = now.addingTimeInterval(-TimeInterval(k) * TimeInterval(LastFMWeekCalendar.weekLength))
            guard let week = finder.week(yearsAgo: request.yearsAgo, from: moment, in: list) else { continue }
            let chart: WeeklyChart
            do {
                chart = try await source.chart(for: request.user, kind: .album, week: week)
            } catch {
                failure = failure ?? error
                continue
            }
            let published = LastFMWeekCalendar.week(containing: Int64(moment.timeIntervalSince1970)).fromDate
            entries.append(entry(request, week: week, published: published, chart: chart, labels: labels))
        }
        // A week Last.fm has not answered yet would drop out of the feed and
        // come back later; better the reader asks again, when all are there.
        if failure == .stillWaiting { return build(request, now: now, entries: [], failure: .stillWaiting) }
        return build(request, now: now, entries: entries, failure: entries.isEmpty ? failure : nil)
    }

    static func entry(_ request: Request, week: ChartWeek, published: Date, chart: WeeklyChart, labels: WeekLabels) -> Entry {
        let rows = request.filter.apply(chart.entries).prefix(max(0, request.rowsPerEntry)).map { WeeklyChartPage.Row($0) }
        let summary = rows.isEmpty ? "No albums that week."
            : rows.map { "\($0.rank). \($0.artist) – \($0.name) (\($0.playsLabel))" }.joined(separator: "\n")
        return Entry(week: week, published: published, title: "\(request.user.value), \(ago(request.yearsAgo)): \(labels.label(for: week))",
                     rows: rows, summary: summary)
    }

    static func build(_ request: Request, now: Date, entries: [Entry], failure: SourceError?) -> FeedPage {
        let state: State = if let failure { .failed(failure) } else if entries.isEmpty { .empty } else { .loaded }
        return FeedPage(user: request.user, yearsAgo: request.yearsAgo, state: state,
                        title: "\(request.user.value), this week \(ago(request.yearsAgo))",
                        updated: entries.first?.published ?? now, entries: entries)
    }

    /// "one year ago", "3 years ago".
    static func ago(_ years: Int) -> String {
        years == 1 ? "one year ago" : WeekLabels.yearsAgo(years)
    }
}
