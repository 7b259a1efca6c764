import Foundation

/// One chart week: the half-open interval `[from, to)` in Unix seconds.
///
/// Last.fm weeks run from Sunday 12:00 UTC to the next Sunday 12:00 UTC.
/// Neighbouring weeks in a real chart list may overlap by a second, and a
/// list may have gaps, so a week is just its two bounds.
public struct ChartWeek: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let from: Int64
    public let to: Int64

    public init(from: Int64, to: Int64) {
        self.from = from
        self.to = to
    }

    public var fromDate: Date { Date(timeIntervalSince1970: TimeInterval(from)) }
    public var toDate: Date { Date(timeIntervalSince1970: TimeInterval(to)) }

    /// Whether `instant` (Unix seconds) falls in `[from, to)`.
    public func contains(_ instant: Int64) -> Bool { from <= instant && instant < to }
    public func contains(_ date: Date) -> Bool { contains(Self.seconds(of: date)) }

    /// `date` in whole Unix seconds, clamped to `Int64` (a far-off or NaN
    /// date must not trap in the conversion).
    static func seconds(of date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return seconds > 0 ? .max : .min }
        if seconds >= 9.223_372_036_854_775_807e18 { return .max }
        if seconds < -9.223_372_036_854_775_808e18 { return .min }
        return Int64(seconds)
    }

    public static func < (lhs: ChartWeek, rhs: ChartWeek) -> Bool {
        (lhs.from, lhs.to) < (rhs.from, rhs.to)
    }

    public var description: String { "\(from)–\(to)" }
}

/// A user's chart list: the weeks for which charts can be asked, sorted.
///
/// Finding the week that contains an instant is a binary search; when two
/// weeks overlap at a boundary second, the week that *starts* at that second
/// wins, because Last.fm weeks begin at their `from`.
public struct ChartWeekList: Sendable, Hashable, Codable {
    public let weeks: [ChartWeek]

    public init(_ weeks: [ChartWeek]) {
        // The calendar's lists are in order already: checked in one pass
        // and kept as they are (every cold chart makes one).
        let inOrder = weeks.indices.allSatisfy { index in
            weeks[index].from < weeks[index].to && (index == weeks.startIndex || weeks[index - 1] < weeks[index])
        }
        self.weeks = inOrder ? weeks : weeks.filter { $0.from < $0.to }.sorted()
    }

    public var isEmpty: Bool { weeks.isEmpty }
    public var earliest: ChartWeek? { weeks.first }
    public var latest: ChartWeek? { weeks.last }

    /// The week containing `instant`, or `nil` when it falls in a gap or
    /// outside the list.
    public func week(containing instant: Int64) -> ChartWeek? {
        // Index of the last week whose `from` is <= instant.
        var low = 0, high = weeks.count
        while low < high {
            let mid = (low + high) / 2
            if weeks[mid].from <= instant { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let candidate = weeks[low - 1]
        if candidate.contains(instant) { return candidate }
        // A week that started earlier may still be longer than its successor.
        return weeks[..<(low - 1)].last(where: { $0.contains(instant) })
    }

    public func week(containing date: Date) -> ChartWeek? {
        week(containing: ChartWeek.seconds(of: date))
    }

    /// Whether `instant` lies between the start of the first week and the end
    /// of the last one (gaps included).
    public func spans(_ date: Date) -> Bool {
        guard let first = earliest, let last = latest else { return false }
        let t = ChartWeek.seconds(of: date)
        return first.from <= t && t < last.to
    }
}

/// One week of one album in a person's album charts: its plays, its rank
/// that week and how it was spelled there (the album's life is made of them).
public struct AlbumWeek: Sendable, Hashable, Codable {
    public let week: ChartWeek
    public let plays: Int
    public let rank: Int
    public let artist: String
    public let name: String

    public init(week: ChartWeek, plays: Int, rank: Int, artist: String, name: String) {
        self.week = week
        self.plays = plays
        self.rank = rank
        self.artist = artist
        self.name = name
    }
}
