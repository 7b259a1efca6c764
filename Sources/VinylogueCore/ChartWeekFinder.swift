import Foundation

/// Finds "this same week, N years ago" in a chart list.
///
/// The target instant is now minus N calendar years in the person's time
/// zone (Feb 29 minus one year is Feb 28, 23:00 stays 23:00 local time); the
/// chart week is the one in the list that contains that instant.
public struct ChartWeekFinder: Sendable {
    public let calendar: Calendar
    /// The most years back `yearsWithCharts` looks, whatever the list says.
    static let furthestYearsAgo = 10_000

    /// - Parameter timeZone: the zone whose calendar years are counted.
    public init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The result of looking for a week.
    public enum Lookup: Sendable, Equatable {
        /// The list has a week containing the target instant.
        case found(ChartWeek)
        /// The target lies inside the user's history, but in a gap.
        case noChart(target: Date)
        /// The target lies before the first week or after the last one.
        case outsideHistory(target: Date)
    }

    /// `now` moved back `yearsAgo` calendar years.
    public func target(yearsAgo: Int, from now: Date) -> Date {
        calendar.date(byAdding: .year, value: -yearsAgo, to: now) ?? now
    }

    public func lookup(yearsAgo: Int, from now: Date, in list: ChartWeekList) -> Lookup {
        lookup(instant: target(yearsAgo: yearsAgo, from: now), in: list)
    }

    public func lookup(instant: Date, in list: ChartWeekList) -> Lookup {
        if let week = list.week(containing: instant) { return .found(week) }
        return list.spans(instant) ? .noChart(target: instant) : .outsideHistory(target: instant)
    }

    /// The chart week that contains "this instant, `yearsAgo` years before
    /// `now`", when the list has one.
    public func week(yearsAgo: Int, from now: Date, in list: ChartWeekList) -> ChartWeek? {
        list.week(containing: target(yearsAgo: yearsAgo, from: now))
    }

    /// Every N >= 1 whose target week has a chart in the list, nearest first.
    public func yearsWithCharts(now: Date, in list: ChartWeekList) -> [Int] {
        weeksWithCharts(now: now, in: list).map(\.yearsAgo)
    }

    /// The chart week of every N >= 1 whose target week has a chart in the
    /// list, nearest first: "this week in every earlier year".
    /// The week of "this same week, N years ago" for every earlier year
    /// whose week, or one within `margin` weeks of it, lies in the list's
    /// span, whether or not that week itself has a chart (the list's own
    /// week when it has, else Last.fm's calendar week): what "around this
    /// time of year" searches, so a year whose only plays fell the week
    /// after is not passed over.
    public func weeksAround(now: Date, in list: ChartWeekList, margin: Int) -> [EarlierWeek] {
        guard let first = list.earliest else { return [] }
        let reach = TimeInterval(max(0, margin)) * TimeInterval(LastFMWeekCalendar.weekLength)
        let span = (now.timeIntervalSince1970 - TimeInterval(first.from) + reach) / (365 * 86_400)
        let furthest = span.isFinite ? Int(min(max(span, 0), Double(Self.furthestYearsAgo))) + 1 : 0
        var weeks: [EarlierWeek] = []
        for n in stride(from: 1, through: furthest, by: 1) {
            guard let t = calendar.date(byAdding: .year, value: -n, to: now),
                  t.timeIntervalSince1970 + reach >= TimeInterval(first.from) else { break }
            let week = list.week(containing: t) ?? LastFMWeekCalendar.week(containing: Int64(t.timeIntervalSince1970.rounded(.down)))
            weeks.append(EarlierWeek(yearsAgo: n, week: week))
        }
        return weeks
    }

    public func weeksWithCharts(now: Date, in list: ChartWeekList) -> [EarlierWeek] {
        guard let first = list.earliest else { return [] }
        // A list reaching absurdly far back (a damaged source) must not
        // turn this into a walk over billions of years: a calendar year is
        // at least 365 days, so no year past this bound can reach `first`.
        let span = (now.timeIntervalSince1970 - TimeInterval(first.from)) / (365 * 86_400)
        let furthest = span.isFinite ? Int(min(max(span, 0), Double(Self.furthestYearsAgo))) + 1 : 0
        var weeks: [EarlierWeek] = []
        for n in stride(from: 1, through: furthest, by: 1) {
            guard let t = calendar.date(byAdding: .year, value: -n, to: now),
                  t.timeIntervalSince1970 >= TimeInterval(first.from) else { break }
            if let week = list.week(containing: t) { weeks.append(EarlierWeek(yearsAgo: n, week: week)) }
        }
        return weeks
    }

}

/// The chart week of "this same week, N years ago".
public struct EarlierWeek: Sendable, Hashable {
    /// N, at least 1.
    public let yearsAgo: Int
    public let week: ChartWeek

    public init(yearsAgo: Int, week: ChartWeek) {
        self.yearsAgo = yearsAgo
        self.week = week
    }
}
