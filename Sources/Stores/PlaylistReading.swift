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
