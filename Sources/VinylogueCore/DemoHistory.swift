/// A deterministic, generated listening history: the built-in demo.
///
/// About fifteen years of believable listening, computed week by week from
/// a seed, so any week's scrobbles can be produced on their own and are the
/// same on every machine and every run. New albums arrive in heavy rotation
/// for a few weeks and then fade; some old favourites come back now and
/// then; and every week has a scatter of single plays, so the play-count
/// filter has something to hide.
public struct DemoHistory: Sendable {
    /// The user the built-in demo belongs to.
    public static let username = try! Username("demo")

    public let seed: UInt64
    /// The first week of the history.
    public let firstWeek: ChartWeek
    public let catalog: DemoCatalog

    /// - Parameters:
    ///   - seed: different seeds give different listeners.
    ///   - start: an instant in the first week (default: 2 January 2011).
    public init(seed: UInt64 = 2013, start: Int64 = 1_293_969_600) {
        self.seed = seed
        self.firstWeek = LastFMWeekCalendar.week(containing: start)
        self.catalog = DemoCatalog(seed: seed, albumCount: 1200, weeks: 16 * 53)
    }

    /// The weeks from the first one to the last that has closed by `now`.
    public func chartList(now: Int64) -> ChartWeekList {
        ChartWeekList(LastFMWeekCalendar.weeks(from: firstWeek.from, closedBy: now))
    }

    /// Every scrobble of `week`, in time order. Empty before the history starts.
    public func scrobbles(in week: ChartWeek) -> [Scrobble] {
        let index = Int((week.from - firstWeek.from) / LastFMWeekCalendar.weekLength)
        guard week.from >= firstWeek.from, week.from == firstWeek.from + Int64(index) * LastFMWeekCalendar.weekLength else { return [] }
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index))
        var plays: [(album: DemoCatalog.Album, tracks: Int)] = []

        // Albums in rotation: discovered recently, fading week by week.
        for album in catalog.albums(discoveredBetween: index - 30, and: index) {
            let age = index - album.discoveredWeek
            let listens = Double(album.intensity) * Self.fade(age: age, halfLife: album.halfLife)
            let whole = Int(listens)
            let extra = rng.unit() < listens - Double(whole) ? 1 : 0
            for _ in 0..<(whole + extra) { plays.append((album, album.tracks.count - Int(rng.next() % 3))) }
        }
        // Old favourites resurfacing.
        for _ in 0..<Int(rng.next() % 4) {
            if let album = catalog.randomDiscovered(before: index - 30, using: &rng), album.isFavourite {
                plays.append((album, album.tracks.count))
            }
        }
        // Single plays from anywhere in the discovered catalog.
        for _ in 0..<(4 + Int(rng.next() % 12)) {
            if let album = catalog.randomDiscovered(before: index, using: &rng) {
                plays.append((album, 1))
            }
        }

        var scrobbles: [Scrobble] = []
        scrobbles.reserveCapacity(plays.reduce(0) { $0 + $1.tracks })
        for (album, trackCount) in plays {
            // A session: the album played from a random evening of the week.
            var instant = week.from + Int64(rng.next() % UInt64(LastFMWeekCalendar.weekLength - 20_000))
            let startTrack = trackCount == 1 ? Int(rng.next() % UInt64(album.tracks.count)) : 0
            for t in startTrack..<min(album.tracks.count, startTrack + max(1, trackCount)) {
                scrobbles.append(Scrobble(instant: instant, artist: album.artist, album: album.name, track: album.tracks[t]))
                instant += Int64(150 + rng.next() % 180)
            }
        }
        // In time order, sessions that share a second in the order they
        // were made (what a stable sort gives). The order is worked out on
        // positions, not scrobbles: sorting scrobbles copied them all, most
        // of the cost of a week in a debug build.
        let instants = scrobbles.map(\.instant)
        let order = scrobbles.indices.filter { week.contains(instants[$0]) }
            .sorted { instants[$0] != instants[$1] ? instants[$0] < instants[$1] : $0 < $1 }
        return order.map { scrobbles[$0] }
    }

    static func fade(age: Int, halfLife: Int) -> Double {
        var value = 1.0
        for _ in 0..<(age / max(1, halfLife)) { value /= 2 }
        return value
    }
}

/// The demo's albums: artists, titles, track lists and when each is found.
public struct DemoCatalog: Sendable {
    /// One generated album.
    public struct Album: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let tracks: [String]
        /// The week index in which the listener finds it.
        public let discoveredWeek: Int
        /// Whole listens per week while new.
        public let intensity: Int
        /// Weeks for the rotation to halve.
        public let halfLife: Int
        /// Whether it comes back years later.
        public let isFavourite: Bool
    }

    /// All albums, ordered by the week they are discovered.
    public let albums: [Album]

    init(seed: UInt64, albumCount: Int, weeks: Int) {
        var rng = SplitMix64(seed: seed)
        var artists: [String] = []
        var albums: [Album] = []
        var usedNames = Set<String>()
        for _ in 0..<albumCount {
            // Some artists release several albums over the years.
            let artist: String
            if !artists.isEmpty, rng.unit() < 0.35 {
                artist = artists[Int(rng.next() % UInt64(artists.count))]
            } else {
                artist = DemoNames.artist(using: &rng)
                artists.append(artist)
            }
            var name = DemoNames.album(using: &rng)
            while usedNames.contains(artist + name) { name = DemoNames.album(using: &rng) }
            usedNames.insert(artist + name)
            let trackCount = 7 + Int(rng.next() % 8)
            var tracks: [String] = []
            tracks.reserveCapacity(trackCount)
            for _ in 0..<trackCount { tracks.append(DemoNames.track(using: &rng)) }
            let roll = rng.unit()
            albums.append(Album(
                artist: artist,
                name: name,
                tracks: tracks,
                discoveredWeek: Int(rng.next() % UInt64(weeks)),
                intensity: roll < 0.2 ? 3 + Int(rng.next() % 3) : roll < 0.6 ? 1 + Int(rng.next() % 2) : 0,
                halfLife: 1 + Int(rng.next() % 4),
                isFavourite: rng.unit() < 0.15
            ))
        }
        // By week, then artist, then title (no two albums share both):
        // grouped by week first, so only the few albums of one week are
        // compared. A sort of the whole list, generic and copying albums,
        // was most of the cost of a catalogue in a debug build, and every
        // fake Last.fm and every composition makes one.
        var byWeek = [[Album]](repeating: [], count: weeks)
        for album in albums { byWeek[album.discoveredWeek].append(album) }
        var ordered: [Album] = []
        ordered.reserveCapacity(albums.count)
        for var week in byWeek {
            if week.count > 1 { week.sort { $0.artist != $1.artist ? $0.artist < $1.artist : $0.name < $1.name } }
            ordered.append(contentsOf: week)
        }
        self.albums = ordered
    }

    /// Index of the first album discovered in or after `week`.
    private func firstIndex(discoveredFrom week: Int) -> Int {
        var low = 0, high = albums.count
        while low < high {
            let mid = (low + high) / 2
            if albums[mid].discoveredWeek < week { low = mid + 1 } else { high = mid }
        }
        return low
    }

    func albums(discoveredBetween start: Int, and end: Int) -> ArraySlice<Album> {
        albums[firstIndex(discoveredFrom: start)..<firstIndex(discoveredFrom: end + 1)]
    }

    func randomDiscovered(before week: Int, using rng: inout SplitMix64) -> Album? {
        let count = firstIndex(discoveredFrom: week)
        guard count > 0 else { return nil }
        return albums[Int(rng.next() % UInt64(count))]
    }
}

/// A small, fast, seedable random number generator (SplitMix64), so the demo
/// is the same everywhere.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A uniform value in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
