import Foundation
import VinylogueCore

extension DemoHistory {
    /// The listens of this history from its first week up to `end` that
    /// count, counted independently of any archive: two plays of one track
    /// under a minute apart are one listen (the archive's documented rule).
    public func listensThatCount(upTo end: Int64) -> Int {
        var count = 0, week = firstWeek
        var lastCounted: [String: Int64] = [:]
        while week.from <= end {
            for scrobble in scrobbles(in: week).filter({ $0.instant <= end }).sorted(by: { $0.instant < $1.instant }) {
                let track = scrobble.artist.lowercased() + "\u{1F}" + scrobble.track.lowercased()
                if let last = lastCounted[track], scrobble.instant - last < 60 { continue }
                lastCounted[track] = scrobble.instant
                count += 1
            }
            week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
        }
        return count
    }
}
