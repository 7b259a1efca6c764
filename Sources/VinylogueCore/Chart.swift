/// Which weekly chart: albums, artists or tracks.
public enum ChartKind: String, Sendable, Hashable, Codable, CaseIterable {
    case album, artist, track

    /// The plural noun a person reads: "albums", "artists", "tracks".
    public var plural: String { rawValue + "s" }
}

/// One row of a weekly chart.
///
/// For an album or track chart, `artist` is the artist and `name` the album
/// or track; for an artist chart both hold the artist's name.
public struct ChartEntry: Sendable, Hashable, Codable {
    public let rank: Int
    public let artist: String
    public let name: String
    public let plays: Int
    /// MusicBrainz id; `nil` when Last.fm does not know one.
    public let mbid: String?
    /// The Last.fm page of the album, artist or track.
    public let url: String?

    public init(rank: Int, artist: String, name: String, plays: Int, mbid: String? = nil, url: String? = nil) {
        self.rank = rank
        self.artist = artist
        self.name = name
        self.plays = plays
        self.mbid = mbid.flatMap { $0.isEmpty ? nil : $0 }
        self.url = url.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A user's chart of one kind for one week, rows in rank order.
public struct WeeklyChart: Sendable, Hashable, Codable {
    public let user: Username
    public let kind: ChartKind
    public let week: ChartWeek
    public let entries: [ChartEntry]

    public init(user: Username, kind: ChartKind, week: ChartWeek, entries: [ChartEntry]) {
        self.user = user
        self.kind = kind
        self.week = week
        // Charts nearly always arrive ranked: sorted only when they are not.
        self.entries = Self.isRanked(entries) ? entries : entries.sorted { $0.rank < $1.rank }
    }

    private static func isRanked(_ entries: [ChartEntry]) -> Bool {
        var previous = Int.min
        for n in entries.indices {
            let rank = entries[n].rank
            if rank < previous { return false }
            previous = rank
        }
        return true
    }
}

/// Hides chart rows played too few times.
///
/// A threshold of N hides every row with N plays or fewer; 0 turns the
/// filter off. The web app offers off, 1, 2, 4, 8, 16 and 32.
public struct PlayCountFilter: Sendable, Hashable, Codable {
    public let threshold: Int

    public static let off = PlayCountFilter(threshold: 0)
    public static let choices = [0, 1, 2, 4, 8, 16, 32]

    public init(threshold: Int) { self.threshold = max(0, threshold) }

    public var isOff: Bool { threshold == 0 }

    public func keeps(_ entry: ChartEntry) -> Bool { entry.plays > threshold }

    public func apply(_ entries: [ChartEntry]) -> [ChartEntry] {
        isOff ? entries : entries.filter(keeps)
    }
}
