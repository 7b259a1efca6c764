import Foundation
import Stores
import VinylogueCore

/// Weekly charts computed from the scrobble archive (either store), with
/// the same semantics as `ScrobbleTally` (and so as Last.fm).
public struct ArchiveChartSource: ChartSource, AlbumHistorySource {
    public let store: any ArchiveReading

    public init(store: any ArchiveReading) { self.store = store }

    package static func nothingArchived(_ user: Username) -> SourceError {
        .notArchived(user: user.value)
    }

    /// Every Last.fm week from the one holding the user's first archived
    /// scrobble to the one holding the last.
    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        guard let span = try await store.span(for: user) else { throw Self.nothingArchived(user) }
        return Self.weeks(spanning: span)
    }

    /// Every Last.fm week from the one holding `span`'s first instant to
    /// the one holding its last.
    public static func weeks(spanning span: ClosedRange<Int64>) -> ChartWeekList {
        let first = LastFMWeekCalendar.week(containing: span.lowerBound)
        let last = LastFMWeekCalendar.week(containing: span.upperBound)
        return ChartWeekList(LastFMWeekCalendar.weeks(from: first.from, closedBy: last.to))
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        guard let chart = try await store.charts(kind, of: user, weeks: [week])?.first else { throw Self.nothingArchived(user) }
        return chart
    }

    /// The charts of several weeks in one query (the every-year page asks
    /// for one week in each earlier year).
    public func charts(for user: Username, kind: ChartKind, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart] {
        guard let charts = try await store.charts(kind, of: user, weeks: weeks) else { throw Self.nothingArchived(user) }
        return charts
    }

    public func albumWeeks(of user: Username, artist: String, album: String) async throws(SourceError) -> [AlbumWeek]? {
        try await store.albumWeeks(of: user, artist: artist, album: album)
    }

    public func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>? {
        try await store.albumsPlayed(by: user, since: from)
    }

    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
        guard let choices = store as? any AlbumChoices else { return .editions }
        return try await choices.albumFolding(of: user)
    }
}

/// "This week in every year": for each earlier year with a chart, the top
/// rows of the week N years ago, from the archive in one query.
public struct EveryYearChart: Sendable, Hashable {
    /// One earlier year.
    public struct Year: Sendable, Hashable {
        public let yearsAgo: Int
        public let week: ChartWeek
        /// The top rows (at most the limit asked for), rank order.
        public let entries: [ChartEntry]
        /// All rows of the week before the limit.
        public let totalEntries: Int
    }

    public let user: Username
    public let kind: ChartKind
    /// Nearest year first; years whose week has no scrobbles are left out.
    public let years: [Year]
}

extension ArchiveChartSource {
    /// The top `limit` rows of `kind` for this same week in every earlier
    /// year of `user`'s archive, as seen from `now` in `timeZone`.
    public func everyYear(for user: Username, kind: ChartKind = .album, limit: Int = 5, now: Date,
                          timeZone: TimeZone) async throws(SourceError) -> EveryYearChart {
        let list = try await chartList(for: user)
        let wanted = ChartWeekFinder(timeZone: timeZone).weeksWithCharts(now: now, in: list)
        let charts = try await self.charts(for: user, kind: kind, weeks: wanted.map(\.week))
        let years = zip(wanted, charts).compactMap { earlier, chart -> EveryYearChart.Year? in
            guard !chart.entries.isEmpty else { return nil }
            return EveryYearChart.Year(yearsAgo: earlier.yearsAgo, week: earlier.week, entries: Array(chart.entries.prefix(max(0, limit))),
                                       totalEntries: chart.entries.count)
        }
        return EveryYearChart(user: user, kind: kind, years: years)
    }
}
