import Foundation
import GRDB
import VinylogueCore

/// Weekly charts computed from the local scrobble archive, with the same
/// semantics as `ScrobbleTally` (and so as Last.fm).
///
/// SQLite groups a week's rows by exact spelling (a range scan of the
/// table's primary key, which starts with user and instant); the few
/// resulting groups are then merged case-insensitively by
/// `ScrobbleTally.Tally`, so Unicode case folding is Swift's, not SQLite's
/// ASCII-only `lower()`.
public struct ArchiveChartSource: ChartSource {
    public let store: ScrobbleStore

    public init(store: ScrobbleStore) { self.store = store }

    public init(database: ArchiveDatabase) { self.store = ScrobbleStore(database: database) }

    static func nothingArchived(_ user: Username) -> SourceError {
        .storage(detail: "nothing is archived for “\(user)”; run `vinylogue sync \(user)` or `vinylogue import FILE --user \(user)` first")
    }

    /// Every Last.fm week from the one holding the user's first archived
    /// scrobble to the one holding the last.
    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        guard let span = try store.span(for: user) else { throw Self.nothingArchived(user) }
        let first = LastFMWeekCalendar.week(containing: span.lowerBound)
        let last = LastFMWeekCalendar.week(containing: span.upperBound)
        return ChartWeekList(LastFMWeekCalendar.weeks(from: first.from, closedBy: last.to))
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        let charts = try store.read { db -> [WeeklyChart]? in
            guard let id = try ScrobbleStore.userID(of: user, in: db) else { return nil }
            return try Self.charts(kind, user: user, userID: id, weeks: [week], in: db)
        }
        guard let chart = charts?.first else { throw Self.nothingArchived(user) }
        return chart
    }

    /// The charts of `kind` for several weeks in one query.
    static func charts(_ kind: ChartKind, user: Username, userID: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        guard !weeks.isEmpty else { return [] }
        let (columns, albumFilter) = switch kind {
        case .album: ("s.artist, s.album, s.album_mbid", "AND s.album <> ''")
        case .artist: ("s.artist, '', s.artist_mbid", "")
        case .track: ("s.artist, s.track, s.track_mbid", "")
        }
        // One row per (week, exact spelling, mbid), in order of first play,
        // so the Tally sees mbids in the same order a time-ordered scan would.
        let values = weeks.map { _ in "(?, ?, ?)" }.joined(separator: ", ")
        let sql = """
            WITH w(n, f, t) AS (VALUES \(values))
            SELECT w.n, \(columns), COUNT(*), MIN(s.instant) AS first
            FROM w JOIN scrobble s ON s.user_id = ? AND s.instant >= w.f AND s.instant < w.t \(albumFilter)
            GROUP BY w.n, \(columns)
            ORDER BY w.n, first
            """
        var arguments: [any DatabaseValueConvertible] = []
        for (n, week) in weeks.enumerated() { arguments += [n, week.from, week.to] }
        arguments.append(userID)
        var tallies = weeks.map { _ in ScrobbleTally.Tally(kind: kind) }
        let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try rows.next() {
            let n: Int = row[0]
            let artist: String = row[1]
            let name: String = row[2]
            let mbid: String? = row[3]
            let plays: Int = row[4]
            switch kind {
            case .album: tallies[n].add(artist: artist, album: name, track: "", mbid: mbid, plays: plays)
            case .artist: tallies[n].add(artist: artist, album: "", track: "", mbid: mbid, plays: plays)
            case .track: tallies[n].add(artist: artist, album: "", track: name, mbid: mbid, plays: plays)
            }
        }
        return zip(weeks, tallies).map { week, tally in
            WeeklyChart(user: user, kind: kind, week: week, entries: tally.ranked())
        }
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
        let finder = ChartWeekFinder(timeZone: timeZone)
        var wanted: [(Int, ChartWeek)] = []
        for n in finder.yearsWithCharts(now: now, in: list) {
            if let week = list.week(containing: finder.target(yearsAgo: n, from: now)) { wanted.append((n, week)) }
        }
        let charts = try store.read { db -> [WeeklyChart] in
            guard let id = try ScrobbleStore.userID(of: user, in: db) else { return [] }
            return try Self.charts(kind, user: user, userID: id, weeks: wanted.map(\.1), in: db)
        }
        let years = zip(wanted, charts).compactMap { pair, chart -> EveryYearChart.Year? in
            guard !chart.entries.isEmpty else { return nil }
            return EveryYearChart.Year(yearsAgo: pair.0, week: pair.1, entries: Array(chart.entries.prefix(max(0, limit))),
                                       totalEntries: chart.entries.count)
        }
        return EveryYearChart(user: user, kind: kind, years: years)
    }
}
