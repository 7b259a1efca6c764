import Foundation

/// Which week a chart page shows.
public enum WeekSelection: Sendable, Hashable {
    /// This same week, N (>= 1) years ago.
    case yearsAgo(Int)
    /// The chart week that contains this instant.
    case containing(Date)
}

/// Everything a screen shows for one user and one week: the presenter shared
/// by the command line, the web pages, the JSON API and the feed.
public struct WeeklyChartPage: Sendable {
    /// One visible chart row.
    public struct Row: Sendable, Hashable {
        public let entry: ChartEntry
        public let rank: Int
        public let artist: String
        /// Album, track or artist name.
        public let name: String
        public let plays: Int
        /// "1 play", "12 plays".
        public let playsLabel: String

        /// `entry` as a row.
        public init(_ entry: ChartEntry) {
            self.entry = entry
            rank = entry.rank
            artist = entry.artist
            name = entry.name
            plays = entry.plays
            playsLabel = WeekLabels.plays(entry.plays)
        }
    }

    /// A link to the same week one year earlier or later.
    public struct Neighbour: Sendable, Hashable {
        /// "2019"
        public let label: String
        public let yearsAgo: Int
        /// The instant one year away from this page's target.
        public let target: Date
        /// The chart week there, if the list has one.
        public let week: ChartWeek?
        public let isEnabled: Bool
    }

    /// What the body of the page is.
    public enum State: Sendable, Hashable {
        /// Rows to show (possibly after the filter hid some).
        case chart
        /// The week exists but has nothing to show.
        case empty(message: String)
        /// The user's history has no chart for the target week.
        case noChart(message: String)
        /// The source failed.
        case failed(SourceError)
    }

    public let user: Username
    public let kind: ChartKind
    public let state: State
    /// The username as the header shows it.
    public let title: String
    public let week: ChartWeek?
    /// "Week 28 · Jul 5 – 12, 2020", or the target day when there is no week.
    public let weekLabel: String
    public let yearsAgo: Int
    /// "3 years ago"
    public let yearsAgoLabel: String
    public let target: Date
    public let previous: Neighbour?
    public let next: Neighbour?
    public let rows: [Row]
    /// Rows the play-count filter hid.
    public let hiddenCount: Int
    public let filter: PlayCountFilter

    /// Why the page failed, when the state is `.failed`.
    public var failure: SourceError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// The message for an empty or missing chart.
    public var emptyText: String? {
        switch state {
        case .empty(let message), .noChart(let message): message
        default: nil
        }
    }

    /// "2 albums with 1 play or fewer are hidden."
    public var hiddenText: String? {
        guard hiddenCount > 0 else { return nil }
        let noun = hiddenCount == 1 ? kind.rawValue : kind.plural
        let verb = hiddenCount == 1 ? "is" : "are"
        return "\(hiddenCount) \(noun) with \(WeekLabels.plays(filter.threshold)) or fewer \(verb) hidden."
    }

    /// The visible entries, for JSON output.
    public var entries: [ChartEntry] { rows.map(\.entry) }
}

extension WeeklyChartPage {
    /// What a page needs besides the source: who, which chart, which week,
    /// the filter, and the person's clock and time zone.
    public struct Request: Sendable {
        public var user: Username
        public var kind: ChartKind
        public var selection: WeekSelection
        public var filter: PlayCountFilter
        public var timeZone: TimeZone

        public init(user: Username, kind: ChartKind = .album, selection: WeekSelection = .yearsAgo(1), filter: PlayCountFilter = .off, timeZone: TimeZone = .gmt) {
            self.user = user
            self.kind = kind
            self.selection = selection
            self.filter = filter
            self.timeZone = timeZone
        }
    }

    /// Loads the chart list and the week's chart from `source` and builds the
    /// page. Source failures become a `.failed` page, never a thrown error.
    public static func load(
        _ request: Request,
        from source: some ChartSource,
        now: Date
    ) async -> WeeklyChartPage {
        let list: ChartWeekList
        do {
            list = try await source.chartList(for: request.user)
        } catch {
            return build(request, now: now, list: ChartWeekList([]), outcome: .failed(error))
        }
        guard let week = week(of: request, now: now, in: list) else { return build(request, now: now, list: list, outcome: .noWeek) }
        do {
            let chart = try await source.chart(for: request.user, kind: request.kind, week: week)
            return build(request, now: now, list: list, outcome: .chart(chart))
        } catch {
            return build(request, now: now, list: list, outcome: .failed(error))
        }
    }

    /// The week of `list` whose chart `request` shows at `now`; nil when
    /// it asks for none the list has.
    public static func week(of request: Request, now: Date, in list: ChartWeekList) -> ChartWeek? {
        let finder = ChartWeekFinder(timeZone: request.timeZone)
        guard case .found(let week) = finder.lookup(instant: target(of: request, now: now, finder: finder), in: list) else { return nil }
        return week
    }

    /// What loading produced.
    public enum Outcome: Sendable {
        case chart(WeeklyChart)
        case noWeek
        case failed(SourceError)
    }

    static func target(of request: Request, now: Date, finder: ChartWeekFinder) -> Date {
        switch request.selection {
        case .yearsAgo(let n): finder.target(yearsAgo: max(1, n), from: now)
        case .containing(let date): date
        }
    }

    /// Builds a page from already-loaded data (pure; the web app uses it to
    /// render cached data too).
    public static func build(
        _ request: Request,
        now: Date,
        list: ChartWeekList,
        outcome: Outcome
    ) -> WeeklyChartPage {
        let finder = ChartWeekFinder(timeZone: request.timeZone)
        let labels = WeekLabels(timeZone: request.timeZone)
        let target = target(of: request, now: now, finder: finder)
        let week = list.week(containing: target)
        // A dated page counts its years from its week's start, so the week
        // "2 years ago" shows is called "2 years ago" on its permalink too
        // (which names the day after the start: counted from that day, for
        // a day after the same date two years ago it said "1 year ago").
        let yearsAgo: Int = switch request.selection {
        case .yearsAgo(let n): max(1, n)
        case .containing(let date): finder.calendar.dateComponents([.year], from: week?.fromDate ?? date, to: now).year ?? 0
        }

        /// The link one year back (`direction` -1) or forward (+1). Years
        /// outside the user's history are skipped, so that from a year after
        /// the history ended "back" leads straight to the latest year with
        /// charts; the link is disabled when no such year lies that way.
        /// Years-ago pages step by whole years from `now` (so a link lands on
        /// exactly the page it names, Feb 29 included); dated pages step from
        /// their date and may reach the current year, and "back" from a date
        /// in the future keeps going until it reaches the past.
        let dated: Bool = if case .containing = request.selection { true } else { false }
        func neighbour(_ direction: Int) -> Neighbour? {
            if case .failed = outcome { return nil }
            func step(_ k: Int) -> (t: Date, n: Int) {
                let n = yearsAgo - direction * k
                if !dated, n >= 1 { return (finder.target(yearsAgo: n, from: now), n) }
                return (finder.calendar.date(byAdding: .year, value: direction * k, to: target) ?? target, n)
            }
            let adjacent = step(1)
            var k = 1
            while k <= 200, let first = list.earliest, let last = list.latest {
                let (t, n) = step(k)
                guard t <= now, dated || n >= 1 else {
                    if direction < 0 { k += 1; continue }
                    break
                }
                if list.spans(t) {
                    return Neighbour(label: String(labels.year(of: t)), yearsAgo: n, target: t, week: list.week(containing: t), isEnabled: true)
                }
                // Outside the history: keep going only towards it.
                let towardsHistory = direction < 0 ? t >= last.toDate : t < first.fromDate
                guard towardsHistory else { break }
                k += 1
            }
            return Neighbour(label: String(labels.year(of: adjacent.t)), yearsAgo: adjacent.n, target: adjacent.t,
                             week: list.week(containing: adjacent.t), isEnabled: false)
        }

        var rows: [Row] = []
        var hidden = 0
        let state: State
        switch outcome {
        case .failed(let error):
            state = .failed(error)
        case .noWeek:
            if list.isEmpty {
                state = .noChart(message: "\(request.user) has no listening history on record yet.")
            } else if let first = list.earliest, target < first.fromDate {
                state = .noChart(message: "\(request.user)'s listening history starts in \(labels.year(of: first.fromDate)), after this week.")
            } else if let last = list.latest, target >= last.toDate {
                state = .noChart(message: "\(request.user)'s listening history has no charts after \(labels.day(last.toDate)).")
            } else {
                state = .noChart(message: "There is no chart for the week of \(labels.day(target)).")
            }
        case .chart(let chart):
            let kept = request.filter.apply(chart.entries)
            hidden = chart.entries.count - kept.count
            rows = kept.map { Row($0) }
            if chart.entries.isEmpty {
                state = .empty(message: "No \(request.kind.plural) that week.")
            } else if rows.isEmpty {
                state = .empty(message: "No \(request.kind.plural) played more than \(WeekLabels.plays(request.filter.threshold)) that week.")
            } else {
                state = .chart
            }
        }

        return WeeklyChartPage(
            user: request.user,
            kind: request.kind,
            state: state,
            title: request.user.value,
            week: week,
            weekLabel: week.map(labels.label(for:)) ?? labels.day(target),
            yearsAgo: yearsAgo,
            yearsAgoLabel: WeekLabels.yearsAgo(yearsAgo),
            target: target,
            previous: neighbour(-1),
            next: neighbour(1),
            rows: rows,
            hiddenCount: hidden,
            filter: request.filter
        )
    }
}
