import Foundation
import VinylogueCore

extension ArchiveReading {
    /// `user`'s week `yearsAgo` years before `now` (in `timeZone`'s
    /// calendar, as the chart page finds it) as a playlist: its album chart
    /// in rank order, each album with the tracks played from it that week.
    /// `folding`: how the person groups albums (their choices). Nil when
    /// the archive does not hold the person.
    public func weekPlaylist(of user: Username, yearsAgo: Int, now: Date, timeZone: TimeZone,
                             folding: AlbumFolding = .editions) async throws(SourceError) -> WeekPlaylist? {
        let target = ChartWeekFinder(timeZone: timeZone).target(yearsAgo: yearsAgo, from: now)
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970.rounded(.down)))
        guard let chart = try await charts(.album, of: user, weeks: [week])?.first else { return nil }
        let played = chart.entries.isEmpty ? [] : try await scrobbles(of: user, from: week.from, to: week.to)
        return WeekPlaylist.build(user: user, week: week, yearsAgo: yearsAgo, entries: chart.entries, scrobbles: played, folding: folding)
    }
}

extension ArchiveReading {
    /// How many of an album's weeks its playlist reads the listens of: its
    /// most played (an album played in 500 weeks is not read 500 times).
    static var albumPlaylistWeeks: Int { 52 }

    /// The album `artist` / `album` to play again: every track played from
    /// it in its most played weeks, in the order first played. The album
    /// is as the person's kept charts group it (`albumWeeks`); `folding`
    /// must be that grouping, their choice. Nil when the archive does not
    /// hold `user` or they never played it.
    public func albumPlaylist(of user: Username, artist: String, album: String,
                              folding: AlbumFolding = .editions) async throws(SourceError) -> AlbumPlaylist? {
        guard let weeks = try await albumWeeks(of: user, artist: artist, album: album), let first = weeks.first else { return nil }
        let read = weeks.sorted { ($0.plays, $1.week) > ($1.plays, $0.week) }.prefix(Self.albumPlaylistWeeks).map(\.week)
        let scrobbles = try await scrobbles(of: user, in: read)
        let name = first.name, by = first.artist
        return AlbumPlaylist.build(user: user, title: "Vinylogue — \(name)",
                                   annotation: "The tracks \(user.value) played from \(name) by \(by), in the order first played.",
                                   fileStem: "album-\(by)-\(name)", albums: [(by, name, weeks.reduce(0) { $0 + $1.plays })],
                                   scrobbles: scrobbles, folding: folding)
    }

    /// The albums `finds` names (rediscover's, in its order) to play
    /// again, each with the tracks played from it in its best week.
    public func rediscoverPlaylist(of user: Username, finds: [Rediscoveries.Find],
                                   folding: AlbumFolding = .editions) async throws(SourceError) -> AlbumPlaylist {
        let scrobbles = try await scrobbles(of: user, in: finds.map(\.bestWeek))
        return AlbumPlaylist.build(user: user, title: "Vinylogue — to rediscover",
                                   annotation: "Albums \(user.value) played heavily around this time of year, and not in the last twelve months, "
                                       + "each with the tracks played from it in its best week.",
                                   fileStem: "rediscover", albums: finds.map { ($0.artist, $0.name, $0.plays) }, scrobbles: scrobbles,
                                   folding: folding)
    }

    /// `year`'s most played albums to play again (`AlbumPlaylist.year`);
    /// nil when the archive does not hold `user`.
    public func yearPlaylist(of user: Username, year: ListeningYear) async throws(SourceError) -> AlbumPlaylist? {
        guard let listening = try await yearListening(of: user, in: year) else { return nil }
        return AlbumPlaylist.year(user: user, year: year.year, listening: listening)
    }

    /// The listens of `weeks` (in any order, each once), read a run of
    /// adjacent weeks at a time.
    func scrobbles(of user: Username, in weeks: [ChartWeek]) async throws(SourceError) -> [Scrobble] {
        var runs: [(from: Int64, to: Int64)] = []
        for week in Set(weeks).sorted() {
            if let last = runs.last, last.to >= week.from {
                runs[runs.count - 1].to = max(last.to, week.to)
            } else {
                runs.append((week.from, week.to))
            }
        }
        var all: [Scrobble] = []
        for run in runs { all += try await scrobbles(of: user, from: run.from, to: run.to) }
        return all
    }
}
