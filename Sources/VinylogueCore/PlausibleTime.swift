import Foundation

/// When a scrobble can plausibly have happened: not before Audioscrobbler
/// began (2002-01-01 UTC) and not more than a day ahead of the clock.
///
/// The one place this rule lives. Importers reject instants outside
/// `range(now:)`; the archive ignores stored instants outside `archived`
/// when it works out a user's weeks, so a bad row (written by an older
/// version, or straight into SQLite) can never turn into billions of weeks.
public enum PlausibleTime {
    /// 2002-01-01 00:00:00 UTC. Nothing was scrobbled before Audioscrobbler.
    public static let earliest: Int64 = 1_009_843_200
    /// How far past "now" an instant may lie: clocks drift, and exports
    /// sometimes label local time as UTC.
    public static let allowedLead: Int64 = 24 * 3600
    /// 2100-01-01 00:00:00 UTC: the latest instant the archive reads.
    ///
    /// The archive's readers have no clock (and need none to chart a past
    /// week); this fixed bound keeps the span of a user's weeks finite
    /// whatever a damaged row says, while never hiding a real scrobble.
    public static let ceiling: Int64 = 4_102_444_800

    /// The instants the archive considers when listing a user's weeks.
    public static let archived: ClosedRange<Int64> = earliest...ceiling

    /// The instants an import accepts at `now`.
    public static func range(now: Date) -> ClosedRange<Int64> {
        let seconds = now.timeIntervalSince1970
        // A clock before 2002 (or NaN) would make an empty range; the floor
        // keeps the range valid and every import then rejects with a reason.
        let latest = seconds.isFinite ? Int64(max(Double(earliest), min(seconds, Double(ceiling)))) : earliest
        return earliest...(latest + allowedLead)
    }

    /// Why `instant` is not a plausible scrobble time at `now`, or `nil`
    /// when it is.
    public static func problem(with instant: Int64, now: Date) -> String? {
        problem(with: instant, in: range(now: now))
    }

    /// Why `instant` lies outside `range` (one made by `range(now:)`), or `nil`.
    public static func problem(with instant: Int64, in range: ClosedRange<Int64>) -> String? {
        if instant < range.lowerBound {
            return "time \(instant) is before 2002-01-01, when scrobbling began"
        }
        if instant > range.upperBound {
            return "time \(instant) is more than a day in the future"
        }
        return nil
    }
}
