import Foundation

/// Where an album's week-by-week plays come from: the archive's weekly
/// rollups (`ArchiveChartSource`).
public protocol AlbumHistorySource: Sendable {
    /// Every week `user` played the album (any spelling, compared as charts
    /// compare them), oldest first; `nil` when `user` has no archive.
    func albumWeeks(of user: Username, artist: String, album: String) async throws(SourceError) -> [WeekPlays]?
}

/// One album's whole life in one person's listening: when it started and
/// stopped, how much, year by year, its best week, and that week against
/// the last twelve months. Shown on the album page of archived users and
/// by `vinylogue album`.
public struct AlbumLife: Sendable, Hashable, Codable {
    /// Plays in one calendar year (every year from the first to the last
    /// play is there, quiet ones with 0).
    public struct Year: Sendable, Hashable, Codable {
        public let year: Int
        public let plays: Int
    }

    public let user: Username
    public let artist: String
    public let name: String
    /// The weeks of the first and the last play.
    public let firstWeek: ChartWeek
    public let lastWeek: ChartWeek
    public let totalPlays: Int
    public let years: [Year]
    /// How many weeks it was in the user's chart at all.
    public let weeksInChart: Int
    /// Its best rank in a week's album chart, and the week it had it with
    /// the most plays (the first, among equals).
    public let bestRank: Int
    public let bestWeek: ChartWeek
    public let bestWeekPlays: Int
    /// "Then and now": its plays in the week the page was asked from (nil
    /// without one) and in the twelve months up to now.
    public let thenWeek: ChartWeek?
    public let thenPlays: Int?
    public let lastTwelveMonthsPlays: Int

    /// The album's life for `user`, or nil when they never played it (or
    /// have no archive). `week` is the week the page was asked from.
    public static func load(user: Username, artist: String, album: String, week: ChartWeek?, now: Date, timeZone: TimeZone,
                            history: some AlbumHistorySource, charts: some ChartSource) async throws(SourceError) -> AlbumLife? {
        guard let weeks = try await history.albumWeeks(of: user, artist: artist, album: album), !weeks.isEmpty else { return nil }
        let chartsOfItsWeeks = try await charts.charts(for: user, kind: .album, weeks: weeks.map(\.week))
        return build(user: user, artist: artist, album: album, weeks: weeks, charts: chartsOfItsWeeks, week: week, now: now, timeZone: timeZone)
    }

    /// Builds the life from the album's weeks and the album charts of those
    /// weeks (pure).
    public static func build(user: Username, artist: String, album: String, weeks: [WeekPlays], charts: [WeeklyChart],
                             week: ChartWeek?, now: Date, timeZone: TimeZone) -> AlbumLife? {
        guard let first = weeks.first, let last = weeks.last else { return nil }
        let key = ScrobbleTally.key(.album, artist: artist, album: album, track: "")
        var best: (rank: Int, week: ChartWeek, plays: Int)?
        var spelled: (artist: String, name: String)?
        for chart in charts {
            guard let entry = chart.entries.first(where: { ScrobbleTally.key(.album, artist: $0.artist, album: $0.name, track: "") == key })
            else { continue }
            spelled = spelled ?? (entry.artist, entry.name)
            // The best rank; among weeks with it, the most plays, then the first.
            if best == nil || entry.rank < best!.rank || entry.rank == best!.rank && entry.plays > best!.plays {
                best = (entry.rank, chart.week, entry.plays)
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func year(_ w: ChartWeek) -> Int { calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval(w.from))) }
        var perYear: [Int: Int] = [:]
        for w in weeks { perYear[year(w.week), default: 0] += w.plays }
        let years = (year(first.week)...year(last.week)).map { Year(year: $0, plays: perYear[$0] ?? 0) }
        let yearAgo = Int64((calendar.date(byAdding: .year, value: -1, to: now) ?? now).timeIntervalSince1970)
        let nowInstant = Int64(now.timeIntervalSince1970)
        let recent = weeks.filter { $0.week.to > yearAgo && $0.week.from <= nowInstant }.reduce(0) { $0 + $1.plays }
        let bestWeek = best ?? (0, first.week, first.plays)
        return AlbumLife(user: user, artist: spelled?.artist ?? artist, name: spelled?.name ?? album,
                         firstWeek: first.week, lastWeek: last.week,
                         totalPlays: weeks.reduce(0) { $0 + $1.plays }, years: years, weeksInChart: weeks.count,
                         bestRank: bestWeek.rank, bestWeek: bestWeek.week, bestWeekPlays: bestWeek.plays,
                         thenWeek: week, thenPlays: week.map { w in weeks.first { $0.week == w }?.plays ?? 0 },
                         lastTwelveMonthsPlays: recent)
    }
}
