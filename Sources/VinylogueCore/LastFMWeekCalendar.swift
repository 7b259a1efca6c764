/// Last.fm's week boundaries: Sunday 12:00 UTC to the next Sunday 12:00 UTC.
public enum LastFMWeekCalendar {
    public static let weekLength: Int64 = 7 * 24 * 3600
    /// Sunday 4 January 1970, 12:00 UTC: a week boundary.
    static let anchor: Int64 = 3 * 24 * 3600 + 12 * 3600

    /// The Last.fm week containing `instant` (Unix seconds).
    public static func week(containing instant: Int64) -> ChartWeek {
        let offset = instant - anchor
        let index = offset >= 0 ? offset / weekLength : (offset - weekLength + 1) / weekLength
        let from = anchor + index * weekLength
        return ChartWeek(from: from, to: from + weekLength)
    }

    /// The consecutive weeks from the one containing `start` to the last week
    /// that has ended by `end`.
    public static func weeks(from start: Int64, closedBy end: Int64) -> [ChartWeek] {
        var weeks: [ChartWeek] = []
        var week = self.week(containing: start)
        while week.to <= end {
            weeks.append(week)
            week = ChartWeek(from: week.to, to: week.to + weekLength)
        }
        return weeks
    }
}
