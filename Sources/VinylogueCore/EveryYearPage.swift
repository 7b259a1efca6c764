import Foundation

/// "This same week in every earlier year": the top rows of each earlier
/// year's week, nearest year first. The presenter of the every-year page.
public struct EveryYearPage: Sendable {
    /// One earlier year with something to show.
    public struct Year: Sendable, Hashable {
        public let yearsAgo: Int
        /// "3 years ago"
        public let yearsAgoLabel: String
        public let week: ChartWeek
        /// "Week 28 · Jul 5 – 12, 2020"
        public let weekLabel: String
        /// The top rows the filter kept, at most `Request.rowsPerYear`.
        public let rows: [WeeklyChartPage.Row]
        /// Rows the filter kept beyond those shown.
        public let moreCount: Int

        /// "and 8 more"
        public var moreText: String? { moreCount > 0 ? "and \(moreCount) more" : nil }
    }

    /// What the body of the page is.
    public enum State: Sendable, Hashable {
        /// At least one year to show.
        case loaded
        /// No earlier year has anything to show this week.
        case empty(message: String)
        /// The source failed.
        case failed(SourceError)
    }

    public let user: Username
    public let kind: ChartKind
    public let state: State
    /// Nearest year first; years the filter emptied are left out.
    public let years: [Year]

    /// Why the page failed, when the state is `.failed`.
    public var failure: SourceError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// The message for a page with no year to show.
    public var emptyText: String? {
        if case .empty(let message) = state { return message }
        return nil
    }
}

extension EveryYearPage {
    /// Who, which chart, the filter, how many rows a year, and the person's
    /// time zone (whose calendar years are counted).
    public struct Request: Sendable {
        public var user: Username
        public var kind: ChartKind
        public var filter: PlayCountFilter
        public var rowsPerYear: Int
        public var timeZone: TimeZone
        /// How many years back at most (nil: every year of the history);
        /// the weeks further back are not read at all.
        public var yearsBack: Int?

        public init(user: Username, kind: ChartKind = .album, filter: PlayCountFilter = .off, rowsPerYear: Int = 5,
                    timeZone: TimeZone = .gmt, yearsBack: Int? = nil) {
            self.user = user
            self.kind = kind
            self.filter = filter
            self.rowsPerYear = rowsPerYear
            self.timeZone = timeZone
            self.yearsBack = yearsBack
        }
    }

    /// Loads the chart list and the chart of this week in every earlier
    /// year from `source` (the archive answers them in one query). Source
    /// failures become a `.failed` page, never a thrown error.
    public static func load(_ request: Request, from source: some ChartSource, now: Date) async -> EveryYearPage {
        do {
            let list = try await source.chartList(for: request.user)
            let earlier = ChartWeekFinder(timeZone: request.timeZone).weeksWithCharts(now: now, in: list)
                .filter { week in request.yearsBack.map { week.yearsAgo <= $0 } ?? true }
            let charts = try await source.charts(for: request.user, kind: request.kind, weeks: earlier.map(\.week))
            return build(request, years: Array(zip(earlier, charts)))
        } catch {
            return EveryYearPage(user: request.user, kind: request.kind, state: .failed(error), years: [])
        }
    }

    /// Builds the page from loaded charts (pure).
    public static func build(_ request: Request, years loaded: [(EarlierWeek, WeeklyChart)]) -> EveryYearPage {
        let labels = WeekLabels(timeZone: request.timeZone)
        let years = loaded.compactMap { earlier, chart -> Year? in
            let kept = request.filter.apply(chart.entries)
            guard !kept.isEmpty else { return nil }
            let shown = kept.prefix(max(0, request.rowsPerYear)).map { WeeklyChartPage.Row($0) }
            return Year(yearsAgo: earlier.yearsAgo, yearsAgoLabel: WeekLabels.yearsAgo(earlier.yearsAgo), week: earlier.week,
                        weekLabel: labels.label(for: earlier.week), rows: shown, moreCount: kept.count - shown.count)
        }
        let state: State = years.isEmpty ? .empty(message: "No earlier year has \(request.kind.plural) for this week.") : .loaded
        return EveryYearPage(user: request.user, kind: request.kind, state: state, years: years)
    }
}
