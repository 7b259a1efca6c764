import Foundation

/// Albums a person played heavily around this time of year in earlier
/// years and has not played at all in the last twelve months: what they
/// loved and forgot. The presenter of `/u/{user}/rediscover` and
/// `vinylogue rediscover`.
///
/// "Around this time of year" is the week N years ago (for every earlier
/// year of the person's history) and `windowWeeks` weeks either side;
/// "heavily" is at least `minimumPlays` plays within one year's window.
public struct Rediscoveries: Sendable, Hashable, Codable {
    /// One forgotten album.
    public struct Find: Sendable, Hashable, Codable {
        public let artist: String
        public let name: String
        public let mbid: String?
        /// Plays within the window of its best year.
        public let plays: Int
        /// How many years ago that was.
        public let yearsAgo: Int
        /// Its best week in the windows, and the plays that week.
        public let bestWeek: ChartWeek
        public let bestWeekPlays: Int
    }

    /// Weeks either side of the week N years ago that count as "around this time of year".
    public static let windowWeeks = 2
    /// Plays within one year's window that make an album "played heavily".
    public static let minimumPlays = 8
    /// At most this many finds, most played first.
    public static let limit = 30

    public let user: Username
    /// How many earlier years were searched.
    public let yearsSearched: Int
    public let finds: [Find]

    /// Searches `user`'s charts from `charts` as seen from `now`.
    public static func load(user: Username, now: Date, timeZone: TimeZone, charts: some ChartSource) async throws(SourceError) -> Rediscoveries {
        let list = try await charts.chartList(for: user)
        let finder = ChartWeekFinder(timeZone: timeZone)
        let known = Set(list.weeks)
        let length = LastFMWeekCalendar.weekLength
        var windows: [(yearsAgo: Int, week: ChartWeek)] = []
        var yearsSearched = 0
        // Every year's window, whether or not the week N years ago itself
        // has a chart: a year played only the week after still counts.
        for year in finder.weeksAround(now: now, in: list, margin: windowWeeks) {
            let before = windows.count
            for step in -windowWeeks...windowWeeks {
                let from = year.week.from + Int64(step) * length
                let week = ChartWeek(from: from, to: from + length)
                if known.contains(week) { windows.append((year.yearsAgo, week)) }
            }
            if windows.count > before { yearsSearched += 1 }
        }
        let yearAgo = Int64((finder.calendar.date(byAdding: .year, value: -1, to: now) ?? now).timeIntervalSince1970)
        let recent = list.weeks.filter { $0.to > yearAgo }
        // The archive says which albums were played lately from its album
        // index; any other source, from the charts of those weeks.
        if let history = charts as? any AlbumHistorySource, let since = recent.first?.from ?? list.weeks.last?.to {
            // Two independent reads, at once.
            async let lately = Self.outcome { () async throws(SourceError) in try await history.albumsPlayed(by: user, since: since) }
            async let folding = Self.outcome { () async throws(SourceError) in try await history.albumFolding(of: user) }
            let windowCharts = try await charts.charts(for: user, kind: .album, weeks: windows.map(\.week))
            if let playedLately = try await lately.get() {
                return build(user: user, windows: windows, windowCharts: windowCharts, playedLately: playedLately, yearsSearched: yearsSearched,
                             folding: try await folding.get())
            }
        }
        let all = try await charts.charts(for: user, kind: .album, weeks: windows.map(\.week) + recent)
        var playedLately = Set<String>()
        for chart in all.dropFirst(windows.count) {
            for entry in chart.entries { playedLately.insert(key(entry)) }
        }
        return build(user: user, windows: windows, windowCharts: Array(all.prefix(windows.count)), playedLately: playedLately,
                     yearsSearched: yearsSearched)
    }

    /// `work`'s result or its failure, kept typed across an `async let`.
    private static func outcome<T: Sendable>(_ work: () async throws(SourceError) -> T) async -> Result<T, SourceError> {
        do throws(SourceError) { return .success(try await work()) } catch { return .failure(error) }
    }

    /// The finds from the charts of the windows and the keys
    /// (`ScrobbleTally.key`, made with `folding`) of the albums played in
    /// the last twelve months (pure).
    public static func build(user: Username, windows: [(yearsAgo: Int, week: ChartWeek)], windowCharts: [WeeklyChart],
                             playedLately: Set<String>, yearsSearched: Int, folding: AlbumFolding = .editions) -> Rediscoveries {
        // Each album is folded once, however many weeks it charted in.
        var keys: [Spelled: String] = [:]
        func key(_ entry: ChartEntry) -> String {
            let spelled = Spelled(artist: entry.artist, name: entry.name)
            if let known = keys[spelled] { return known }
            let made = Self.key(entry, folding)
            keys[spelled] = made
            return made
        }
        struct Window { var plays = 0; var best: ChartEntry?; var bestWeek: ChartWeek? }
        // Plays per album per year's window.
        var byYear: [String: [Int: Window]] = [:]
        for (window, chart) in zip(windows, windowCharts) {
            for entry in chart.entries {
                let album = key(entry)
                guard !playedLately.contains(album) else { continue }
                var w = byYear[album, default: [:]][window.yearsAgo, default: Window()]
                w.plays += entry.plays
                if w.best == nil || entry.plays > w.best!.plays { w.best = entry; w.bestWeek = window.week }
                byYear[album, default: [:]][window.yearsAgo] = w
            }
        }
        var finds: [Find] = []
        for years in byYear.values {
            guard let (yearsAgo, window) = years.max(by: { a, b in a.value.plays != b.value.plays ? a.value.plays < b.value.plays : a.key > b.key }),
                  window.plays >= minimumPlays, let best = window.best, let week = window.bestWeek else { continue }
            finds.append(Find(artist: best.artist, name: best.name, mbid: best.mbid, plays: window.plays, yearsAgo: yearsAgo,
                              bestWeek: week, bestWeekPlays: best.plays))
        }
        finds.sort { a, b in
            if a.plays != b.plays { return a.plays > b.plays }
            if a.artist.lowercased() != b.artist.lowercased() { return a.artist.lowercased() < b.artist.lowercased() }
            return a.name.lowercased() < b.name.lowercased()
        }
        return Rediscoveries(user: user, yearsSearched: yearsSearched, finds: Array(finds.prefix(limit)))
    }

    private struct Spelled: Hashable {
        let artist: String
        let name: String
    }

    private static func key(_ entry: ChartEntry, _ folding: AlbumFolding = .editions) -> String {
        ScrobbleTally.key(.album, artist: entry.artist, album: entry.name, track: "", folding: folding) ?? ""
    }
}
