import Foundation
import GRDB
import GRDBSQLite
import VinylogueCore

/// Weekly charts computed from the scrobble archive (either store), with
/// the same semantics as `ScrobbleTally` (and so as Last.fm).
public struct ArchiveChartSource: ChartSource, AlbumHistorySource {
    public let store: any ScrobbleArchive

    public init(store: any ScrobbleArchive) { self.store = store }

    public init(database: ArchiveDatabase) { self.store = SQLiteScrobbleStore(database: database) }

    static func nothingArchived(_ user: Username) -> SourceError {
        .notArchived(user: user.value)
    }

    /// Every Last.fm week from the one holding the user's first archived
    /// scrobble to the one holding the last.
    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        guard let span = try await store.span(for: user) else { throw Self.nothingArchived(user) }
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

    /// SQLite's read behind every chart question: nil when `user` has no
    /// archive, else the charts of `weeks`, from the weekly rollups when
    /// they are whole Last.fm weeks (always, for the archive's own week
    /// list), else counted from the scrobbles.
    static func reading(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) -> @Sendable (Database) throws -> [WeeklyChart]? {
        { db in
            guard let id = try SQLiteScrobbleStore.userID(of: user, in: db) else { return nil }
            if WeeklyRollup.canRead(kind, weeks) { return try WeeklyRollup.charts(kind, user: user, userID: id, weeks: weeks, in: db) }
            return try charts(kind, user: user, userID: id, weeks: weeks, in: db)
        }
    }

    /// The charts of `kind` for several weeks in one SQLite query.
    ///
    /// SQLite only walks the primary key's (user, instant) ranges, with no
    /// sorting; the rows are counted per exact spelling in Swift (a
    /// dictionary of a few hundred keys) and merged by `SpellingCounts`.
    static func charts(_ kind: ChartKind, user: Username, userID: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        guard !weeks.isEmpty else { return [] }
        let (name, mbid, albumFilter) = switch kind {
        case .album: ("s.album", "s.album_mbid", "AND s.album <> ''")
        case .artist: ("''", "s.artist_mbid", "")
        case .track: ("s.track", "s.track_mbid", "")
        }
        let values = weeks.map { _ in "(?, ?, ?)" }.joined(separator: ", ")
        let statement = try db.cachedStatement(sql: """
            WITH w(n, f, t) AS (VALUES \(values))
            SELECT w.n, s.instant, s.artist, \(name), \(mbid)
            FROM w JOIN scrobble s ON s.user_id = ? AND s.instant >= w.f AND s.instant < w.t \(albumFilter)
            """)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (n, week) in weeks.enumerated() {
            sqlite3_bind_int64(handle, Int32(3 * n + 1), Int64(n))
            sqlite3_bind_int64(handle, Int32(3 * n + 2), week.from)
            sqlite3_bind_int64(handle, Int32(3 * n + 3), week.to)
        }
        sqlite3_bind_int64(handle, Int32(3 * weeks.count + 1), userID)
        defer { sqlite3_reset(handle) }

        var counts = SpellingCounts(kind: kind, weeks: weeks.count)
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            let hasMBID = sqlite3_column_type(handle, 4) != SQLITE_NULL
            counts.addPlay(week: Int(sqlite3_column_int64(handle, 0)), artist: SQLiteColumns.text(handle, 2), name: SQLiteColumns.text(handle, 3),
                           instant: sqlite3_column_int64(handle, 1), mbid: hasMBID ? { SQLiteColumns.text(handle, 4) } : nil)
            code = sqlite3_step(handle)
        }
        try SQLiteColumns.check(code, db)
        return counts.charts(of: user, weeks: weeks)
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
