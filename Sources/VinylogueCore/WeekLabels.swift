import Foundation

/// Formats chart weeks for people: "Week 28 · Jul 5 – 12, 2020".
///
/// Labels are built from calendar components rather than a locale's date
/// formatter, so they read the same on every machine.
public struct WeekLabels: Sendable {
    public let calendar: Calendar
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = 1  // weeks start on Sunday, as Last.fm's do
        calendar.minimumDaysInFirstWeek = 1
        self.calendar = calendar
    }

    /// "Week 28 · Jul 5 – 12, 2020"
    public func label(for week: ChartWeek) -> String {
        "Week \(weekNumber(of: week)) · \(range(of: week))"
    }

    /// The week of the year its first day falls in (weeks start on Sunday).
    public func weekNumber(of week: ChartWeek) -> Int {
        calendar.component(.weekOfYear, from: week.fromDate)
    }

    /// The year `weekNumber` counts the week in: a week that holds 1
    /// January is that year's week 1 ("Week 1 · Dec 28, 2025 – Jan 4, 2026"
    /// is 2026's).
    public func year(of week: ChartWeek) -> Int {
        calendar.component(.yearForWeekOfYear, from: week.fromDate)
    }

    /// "Jul 5 – 12, 2020", "Jun 28 – Jul 5, 2020", "Dec 27, 2020 – Jan 3, 2021".
    /// The end is the day the week closes on.
    public func range(of week: ChartWeek) -> String {
        let a = calendar.dateComponents([.year, .month, .day], from: week.fromDate)
        let b = calendar.dateComponents([.year, .month, .day], from: week.toDate)
        let ma = Self.months[a.month! - 1], mb = Self.months[b.month! - 1]
        if a.year != b.year { return "\(ma) \(a.day!), \(a.year!) – \(mb) \(b.day!), \(b.year!)" }
        if a.month != b.month { return "\(ma) \(a.day!) – \(mb) \(b.day!), \(b.year!)" }
        return "\(ma) \(a.day!) – \(b.day!), \(b.year!)"
    }

    /// "Jul 5, 2020"
    public func day(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return "\(Self.months[c.month! - 1]) \(c.day!), \(c.year!)"
    }

    /// "2020-07-05", the form used in permalinks.
    public func isoDay(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    /// The day that names `week` in a permalink: "2020-07-06", the day
    /// after the one it starts on (weeks start at noon, and that first day
    /// is shared with the week before).
    public func permalinkDay(of week: ChartWeek) -> String {
        isoDay(week.fromDate.addingTimeInterval(86_400))
    }

    /// Parses "YYYY-MM-DD" as noon on that day in this calendar's zone
    /// (noon keeps the date inside the same Last.fm week in every zone but
    /// the extremes, and inside the same day everywhere). Any year from
    /// 0001 is a date (as `format: date` has it): one before anybody's
    /// history is a week without a chart, not a malformed address.
    public func parseDay(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              [parts[0], parts[1], parts[2]].allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), (1...31).contains(d), y >= 1 else { return nil }
        let components = DateComponents(year: y, month: m, day: d, hour: 12)
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == d else { return nil }
        return date
    }

    /// The calendar year of `date`.
    public func year(of date: Date) -> Int { calendar.component(.year, from: date) }

    /// "1 year ago", "3 years ago", "This year".
    public static func yearsAgo(_ n: Int) -> String {
        switch n {
        case ..<1: "This year"
        case 1: "1 year ago"
        default: "\(n) years ago"
        }
    }

    /// "1 play", "12 plays".
    public static func plays(_ n: Int) -> String { n == 1 ? "1 play" : "\(n) plays" }
}
