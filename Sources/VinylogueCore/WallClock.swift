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
}
