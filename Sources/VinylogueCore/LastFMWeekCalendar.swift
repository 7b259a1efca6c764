/// Last.fm's week boundaries: Sunday 12:00 UTC to the next Sunday 12:00 UTC.
///
/// Total over every `Int64`: the arithmetic is done in 128 bits and clamped,
/// so a damaged timestamp can give a strange week but never an overflow trap.
public enum LastFMWeekCalendar {
    public static let weekLength: Int64 = 7 * 24 * 3600
    /// Sunday 4 January 1970, 12:00 UTC: a week boundary.
    static let anchor: Int64 = 3 * 24 * 3600 + 12 * 3600

    /// The Last.fm week containing `instant` (Unix seconds). Near the ends
    /// of `Int64` the week is cut at `Int64.min` / `Int64.max`.
    public static func week(containing instant: Int64) -> ChartWeek {
        // Every believable instant is far from the ends, where 64 bits give
        // the same week: 128-bit arithmetic is generic code, slow in a debug
        // build, and this is asked for every scrobble stored.
        if instant > -(1 << 61) && instant < 1 << 61 {
            let offset = instant - anchor
            let index = offset >= 0 ? offset / weekLength : (offset - weekLength + 1) / weekLength
            let from = anchor + index * weekLength
            return ChartWeek(from: from, to: from + weekLength)
        }
        let length = Int128(weekLength)
        let offset = Int128(instant) - Int128(anchor)
        let index = offset >= 0 ? offset / length : (offset - length + 1) / length
        let from = Int128(anchor) + index * length
        return ChartWeek(from: clamped(from), to: clamped(from + length))
    }

    /// The consecutive weeks from the one containing `start` to the last week
    /// that has ended by `end`.
    ///
    /// The result has one element per week in between, so callers bound the
    /// span (the archive reads only `PlausibleTime.archived`).
    public static func weeks(from start: Int64, closedBy end: Int64) -> [ChartWeek] {
        var weeks: [ChartWeek] = []
        var week = self.week(containing: start)
        // Every cold chart makes hundreds: one allocation, not a dozen.
        if end > week.from { weeks.reserveCapacity(Int(min((Int128(end) - Int128(week.from)) / Int128(weekLength) + 1, 1 << 16))) }
        while week.to <= end {
            weeks.append(week)
            // The next week would end past Int64.max: there is none.
            guard week.to <= Int64.max - weekLength else { break }
            week = ChartWeek(from: week.to, to: week.to + weekLength)
        }
        return weeks
    }

    static func clamped(_ value: Int128) -> Int64 {
        value < Int128(Int64.min) ? .min : value > Int128(Int64.max) ? .max : Int64(value)
    }
}
