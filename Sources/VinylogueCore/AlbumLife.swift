import Foundation

/// Where an album's week-by-week plays and ranks come from: the archive's
/// weekly charts (`ArchiveChartSource`).
public protocol AlbumHistorySource: Sendable {
    /// Every week `user` played the album (any spelling, compared as charts
    /// compare them), oldest first, with its plays and rank in that week's
    /// album chart; `nil` when `user` has no archive.
    func albumWeeks(of user: Username, artist: String, album: String) async throws(SourceError) -> [AlbumWeek]?

    /// The keys (`ScrobbleTally.key`) of every album `user` played in the
    /// weeks starting at or after `from`; `nil` when `user` has no archive.
    func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>?

    /// How `user`'s plays group into albums: the keys `albumsPlayed` gives
    /// are made with it.
    func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding
}

extension AlbumHistorySource {
    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding { .editions }
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
                            history: some AlbumHistorySource) async throws(SourceError) -> AlbumLife? {
        guard let weeks = try await history.albumWeeks(of: user, artist: artist, album: album), !weeks.isEmpty else { return nil }
        return build(user: user, weeks: weeks, week: week, now: now, timeZone: timeZone)
    }

    /// Builds the life from the album's weeks, oldest first (pure); the
    /// album is spelled as in its first week.
    public static func build(user: Username, weeks: [AlbumWeek], week: ChartWeek?, now: Date, timeZone: TimeZone) -> AlbumLife? {
        guard let first = weeks.first, let last = weeks.last else { return nil }
        // The best rank; among weeks with it, the most plays, then the first.
        var best = first
        for w in weeks.dropFirst() where w.rank < best.rank || w.rank == best.rank && w.plays > best.plays { best = w }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func year(_ w: ChartWeek) -> Int { calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval(w.from))) }
        var perYear: [Int: Int] = [:]
        for w in weeks { perYear[year(w.week), default: 0] += w.plays }
        let years = (year(first.week)...year(last.week)).map { Year(year: $0, plays: perYear[$0] ?? 0) }
        let yearAgo = Int64((calendar.date(byAdding: .year, value: -1, to: now) ?? now).timeIntervalSince1970)
        let nowInstant = Int64(now.timeIntervalSince1970)
        let recent = weeks.filter { $0.week.to > yearAgo && $0.week.from <= nowInstant }.reduce(0) { $0 + $1.plays }
        return AlbumLife(user: user, artist: first.artist, name: first.name,
                         firstWeek: first.week, lastWeek: last.week,
                         totalPlays: weeks.reduce(0) { $0 + $1.plays }, years: years, weeksInChart: weeks.count,
                         bestRank: best.rank, bestWeek: best.week, bestWeekPlays: best.plays,
                         thenWeek: week, thenPlays: week.map { w in weeks.first { $0.week == w }?.plays ?? 0 },
                         lastTwelveMonthsPlays: recent)
    }
}
