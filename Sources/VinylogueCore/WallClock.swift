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

    /// `text` as an instant: ISO 8601 with a zone (`2024-02-29T11:59:00Z`)
    /// or seconds since 1970; nil for anything else.
    public static func instant(_ text: String) -> Date? {
        if let seconds = Double(text), seconds.isFinite { return Date(timeIntervalSince1970: seconds) }
        return try? Date(text, strategy: .iso8601)
    }
}
