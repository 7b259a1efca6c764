import Foundation

/// The source of "now". Logic never calls `Date()` itself: the composition
/// root passes `.system`, tests pass `.fixed(...)`.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    public var now: Date { read() }

    /// The machine's clock.
    public static var system: WallClock { WallClock { Date() } }

    /// A clock stopped at `date`.
    public static func fixed(_ date: Date) -> WallClock { WallClock { date } }

    /// A clock that reads `start` now and runs on at the machine's pace:
    /// a whole process (its sessions, rate limits and caches still see
    /// time pass) put on a chosen day, for tests of dates that matter.
    public static func running(from start: Date) -> WallClock {
        let origin = Date()
        return WallClock { start.addingTimeInterval(Date().timeIntervalSince(origin)) }
    }

    /// `text` as an instant between 2002 and the end of 9999: ISO 8601
    /// with a zone (`2024-02-29T11:59:00Z`) naming a day and time that
    /// exist, or seconds since 1970; nil for anything else (Feb 30, 24:00,
    /// 1e300).
    public static func instant(_ text: String) -> Date? {
        let date: Date
        if let seconds = Double(text), seconds.isFinite {
            date = Date(timeIntervalSince1970: seconds)
        } else {
            guard let parsed = try? Date(text, strategy: .iso8601), namesARealTime(text) else { return nil }
            date = parsed
        }
        // 2002-01-01 to 9999-12-31: what the archive and the charts can hold.
        guard (1_009_843_200...253_402_300_799).contains(date.timeIntervalSince1970) else { return nil }
        return date
    }

    /// Whether the date and time written at the start of `text`
    /// (`YYYY-MM-DDTHH:MM:SS`) exist: ISO 8601 parsing rolls Feb 30 over to
    /// March and takes 24:00.
    private static func namesARealTime(_ text: String) -> Bool {
        let digits = text.prefix(19).split(whereSeparator: { "-T:".contains($0) }).map { Int($0) }
        guard digits.count == 6, let year = digits[0], let month = digits[1], let day = digits[2],
              let hour = digits[3], let minute = digits[4], let second = digits[5],
              (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}
