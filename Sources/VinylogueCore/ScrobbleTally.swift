/// Computes weekly charts from scrobbles with Last.fm's semantics.
///
/// A scrobble counts towards the week containing its instant (weeks start
/// Sunday 12:00 UTC); plays of the same album, artist or track are grouped
/// as `AlbumFolding` says (editions of an album are one album; names
/// compare without case, accents, width, quotes or spacing), and rows are
/// ranked by plays, most first. Ties are
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

    /// The weeks of one album (any spelling) counted from `scrobbles`: for
    /// each week with a play of it, its plays, rank and spelling in that
    /// week's album chart, oldest first. The reference the archive's kept
    /// charts are held to.
    public static func albumWeeks(artist: String, album: String, in scrobbles: some Sequence<Scrobble>) -> [AlbumWeek] {
        guard let key = key(.album, artist: artist, album: album, track: "") else { return [] }
        let byWeek = Dictionary(grouping: scrobbles) { LastFMWeekCalendar.week(containing: $0.instant) }
        return byWeek.keys.sorted { $0.from < $1.from }.compactMap { week in
            var tally = Tally(kind: .album)
            for s in byWeek[week]!.sorted(by: { $0.instant < $1.instant }) { tally.add(s) }
            guard let entry = tally.ranked().first(where: { Self.key(.album, artist: $0.artist, album: $0.name, track: "") == key }) else { return nil }
            return AlbumWeek(week: week, plays: entry.plays, rank: entry.rank, artist: entry.artist, name: entry.name)
        }
    }

    /// The grouping key of a scrobble for a chart of `kind` (`AlbumFolding`),
    /// or `nil` when the scrobble does not belong in such a chart (an album
    /// chart skips scrobbles without an album).
    public static func key(_ kind: ChartKind, artist: String, album: String, track: String,
                           folding: AlbumFolding = .editions) -> String? {
        switch kind {
        case .artist: return folding.folded(.artist, artist: artist, name: artist).key
        case .album: return album.isEmpty ? nil : folding.folded(.album, artist: artist, name: album).key
        case .track: return folding.folded(.track, artist: artist, name: track).key
        }
    }

    /// Accumulates plays per group; usable incrementally (the archive feeds it
    /// rows straight from SQLite). Each play's names are folded once: the
    /// group key and the ranking's tie-break both use those folded names.
    /// Names folded by one grouping (`AlbumFolding.folded`), remembered:
    /// counting week after week meets the same spellings again and again,
    /// and folding a name costs far more than looking it up. A value: a
    /// write keeps one for its weeks, and hands it from tally to tally.
    public struct FoldedNames: Sendable {
        public let folding: AlbumFolding
        private var known: [Spelling: AlbumFolding.Folded] = [:]

        private struct Spelling: Hashable {
            let kind: ChartKind
            let artist: String
            let name: String
        }

        /// At most this many names are kept; then it starts again.
        static let limit = 50_000

        public init(_ folding: AlbumFolding = .editions) {
            self.folding = folding
        }

        /// `folding.folded(kind, artist:, name:)`, remembered.
        public mutating func folded(_ kind: ChartKind, artist: String, name: String) -> AlbumFolding.Folded {
            let spelling = Spelling(kind: kind, artist: artist, name: name)
            if let found = known[spelling] { return found }
            let folded = folding.folded(kind, artist: artist, name: name)
            if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
            known[spelling] = folded
            return folded
        }
    }

    public struct Tally: Sendable {
        struct Group {
            var plays = 0
            /// Every spelling seen, with its plays (nearly always one).
            var spellings: [(artist: String, name: String, plays: Int)]
            /// The folded artist and name, which all spellings share.
            let foldedArtist: String
            let foldedName: String
            var mbid: String?
        }

        public let kind: ChartKind
        /// How plays group (editions fold unless the person chose
        /// otherwise), with the names folded so far: swap it with a
        /// write's own to share them (`WeeklyRollup.rows`).
        public var names: FoldedNames
        public var folding: AlbumFolding { names.folding }
        /// Each group's place in `groups`, by folded key.
        private var index: [String: Int] = [:]
        /// Each exact spelling's group and place among its spellings: a
        /// spelling seen before is counted without folding it again.
        private var exact: [Spelling: (group: Int, spelling: Int)] = [:]
        private var groups: [Group] = []

        private struct Spelling: Hashable {
            let artist: String
            let name: String
        }

        public init(kind: ChartKind, folding: AlbumFolding = .editions) {
            self.kind = kind
            names = FoldedNames(folding)
        }

        public mutating func add(_ scrobble: Scrobble) {
            add(artist: kind == .album ? scrobble.artistOfAlbum : scrobble.artist, album: scrobble.album, track: scrobble.track,
                mbid: kind == .album ? scrobble.albumMBID : kind == .artist ? scrobble.artistMBID : scrobble.trackMBID)
        }

        public mutating func add(artist: String, album: String, track: String, mbid: String? = nil, plays: Int = 1) {
            let name: String = switch kind {
            case .artist: artist
            case .album: album
            case .track: track
            }
            if kind == .album && album.isEmpty { return }
            let spelling = Spelling(artist: artist, name: name)
            let place: (group: Int, spelling: Int)
            if let known = exact[spelling] {
                place = known
            } else {
                // The same key as `ScrobbleTally.key`.
                let folded = names.folded(kind, artist: artist, name: name)
                let (foldedArtist, foldedName, key) = (folded.artist, folded.name, folded.key)
                let n: Int
                if let found = index[key] {
                    n = found
                } else {
                    n = groups.count
                    index[key] = n
                    groups.append(Group(spellings: [], foldedArtist: foldedArtist, foldedName: foldedName))
                }
                groups[n].spellings.append((artist, name, 0))
                place = (n, groups[n].spellings.count - 1)
                exact[spelling] = place
            }
            groups[place.group].plays += plays
            groups[place.group].spellings[place.spelling].plays += plays
            if groups[place.group].mbid == nil, let mbid, !mbid.isEmpty { groups[place.group].mbid = mbid }
        }

        public func ranked() -> [ChartEntry] {
            // Most plays first; ties by folded artist, then folded name.
            let order = groups.indices.sorted { a, b in
                let x = groups[a], y = groups[b]
                if x.plays != y.plays { return x.plays > y.plays }
                if x.foldedArtist != y.foldedArtist { return x.foldedArtist < y.foldedArtist }
                return x.foldedName < y.foldedName
            }
            return order.enumerated().map { rank, n in
                let group = groups[n]
                // The spelling played most; on a tie, the first in (artist, name) order.
                var best = group.spellings[0]
                for s in group.spellings.dropFirst() where s.plays > best.plays || s.plays == best.plays && (s.artist, s.name) < (best.artist, best.name) {
                    best = s
                }
                return ChartEntry(rank: rank + 1, artist: best.artist, name: best.name, plays: group.plays, mbid: group.mbid)
            }
        }
    }
}
