/// Computes weekly charts from scrobbles with Last.fm's semantics.
///
/// A scrobble counts towards the week containing its instant (weeks start
/// Sunday 12:00 UTC); plays of the same album, artist or track are grouped
/// case-insensitively, and rows are ranked by plays, most first. Ties are
/// ordered by artist then name so a chart is stable. The spelling shown for a
/// group is the one played most often (the first seen on a tie).
public enum ScrobbleTally {
    /// The chart of `kind` for `week` from `scrobbles` (any order, any range;
    /// scrobbles outside the week are ignored).
    public static func chart<S: Sequence>(_ kind: ChartKind, user: Username, week: ChartWeek, scrobbles: S) -> WeeklyChart where S.Element == Scrobble {
        var tally = Tally(kind: kind)
        for scrobble in scrobbles where week.contains(scrobble.instant) {
            tally.add(scrobble)
        }
        return WeeklyChart(user: user, kind: kind, week: week, entries: tally.ranked())
    }

    /// The grouping key of a scrobble for a chart of `kind`, or `nil` when the
    /// scrobble does not belong in such a chart (an album chart skips
    /// scrobbles without an album).
    public static func key(_ kind: ChartKind, artist: String, album: String, track: String) -> String? {
        switch kind {
        case .artist: return artist.lowercased()
        case .album: return album.isEmpty ? nil : artist.lowercased() + "\u{1F}" + album.lowercased()
        case .track: return artist.lowercased() + "\u{1F}" + track.lowercased()
        }
    }

    /// Accumulates plays per group; usable incrementally (the archive feeds it
    /// rows straight from SQLite).
    public struct Tally: Sendable {
        struct Group {
            var plays = 0
            var spellings: [Spelling: Int] = [:]
            var firstSeen: Int
            var mbid: String?
        }
        struct Spelling: Hashable { let artist: String; let name: String }

        public let kind: ChartKind
        private var groups: [String: Group] = [:]
        private var counter = 0

        public init(kind: ChartKind) { self.kind = kind }

        public mutating func add(_ scrobble: Scrobble) {
            add(artist: scrobble.artist, album: scrobble.album, track: scrobble.track,
                mbid: kind == .album ? scrobble.albumMBID : kind == .artist ? scrobble.artistMBID : scrobble.trackMBID)
        }

        public mutating func add(artist: String, album: String, track: String, mbid: String? = nil, plays: Int = 1) {
            guard let key = ScrobbleTally.key(kind, artist: artist, album: album, track: track) else { return }
            let name: String = switch kind {
            case .artist: artist
            case .album: album
            case .track: track
            }
            counter += 1
            groups[key, default: Group(firstSeen: counter)].plays += plays
            groups[key]!.spellings[Spelling(artist: artist, name: name), default: 0] += plays
            if groups[key]!.mbid == nil, let mbid, !mbid.isEmpty { groups[key]!.mbid = mbid }
        }

        public func ranked() -> [ChartEntry] {
            let rows = groups.values.map { group -> (Spelling, Group) in
                let best = group.spellings.max { a, b in
                    a.value != b.value ? a.value < b.value : (a.key.artist, a.key.name) > (b.key.artist, b.key.name)
                }!.key
                return (best, group)
            }
            let sorted = rows.sorted { a, b in
                if a.1.plays != b.1.plays { return a.1.plays > b.1.plays }
                let la = a.0.artist.lowercased(), lb = b.0.artist.lowercased()
                if la != lb { return la < lb }
                return a.0.name.lowercased() < b.0.name.lowercased()
            }
            return sorted.enumerated().map { index, row in
                ChartEntry(rank: index + 1, artist: row.0.artist, name: row.0.name, plays: row.1.plays, mbid: row.1.mbid)
            }
        }
    }
}
