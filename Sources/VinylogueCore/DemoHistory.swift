/// A deterministic, generated listening history: the built-in demo.
///
/// About fifteen years of believable listening, computed week by week from
/// a seed, so any week's scrobbles can be produced on their own and are the
/// same on every machine and every run. New albums arrive in heavy rotation
/// for a few weeks and then fade; some old favourites come back now and
/// then; and every week has a scatter of single plays, so the play-count
/// filter has something to hide. `DemoListening` varies the listener: their
/// taste, how much they play, a long gap, an album played for years.
public struct DemoHistory: Sendable {
    /// The user the built-in demo belongs to.
    public static let username = try! Username("demo")

    public let seed: UInt64
    /// The first week of the history.
    public let firstWeek: ChartWeek
    public let catalog: DemoCatalog
    /// How this listener listens.
    public let listening: DemoListening
    /// The album `listening.heavyRepeat` plays, when there is one: the first
    /// album found in or after the repeat's first week.
    public let repeatedAlbum: DemoCatalog.Album?

    /// - Parameters:
    ///   - seed: different seeds give different listeners.
    ///   - start: an instant in the first week (default: 2 January 2011).
    ///   - listening: taste, pace, gap and heavy repeat (default: the demo
    ///     user's, which none of these change).
    public init(seed: UInt64 = 2013, start: Int64 = 1_293_969_600, listening: DemoListening = DemoListening()) {
        let firstWeek = LastFMWeekCalendar.week(containing: start)
        self.seed = seed
        self.firstWeek = firstWeek
        self.listening = listening
        // A second era of as many albums again, found in the 16 years after
        // the first 16, so a history keeps finding new music for 32 years;
        // the first era's albums, and so every week before it ends, are as
        // they were with one era.
        let catalog = DemoCatalog(seed: seed, taste: listening.taste, albumCount: 1200, weeks: 16 * 53, eras: 2)
        self.catalog = catalog
        repeatedAlbum = listening.heavyRepeat.flatMap { heavy in
            catalog.firstDiscovered(from: Self.index(of: LastFMWeekCalendar.week(containing: heavy.from).from, after: firstWeek))
        }
    }

    static func index(of weekStart: Int64, after firstWeek: ChartWeek) -> Int {
        Int((weekStart - firstWeek.from) / LastFMWeekCalendar.weekLength)
    }

    /// The weeks from the first one to the last that has closed by `now`.
    public func chartList(now: Int64) -> ChartWeekList {
        ChartWeekList(LastFMWeekCalendar.weeks(from: firstWeek.from, closedBy: now))
    }

    /// Every scrobble of `week`, in time order. Empty before the history
    /// starts and in its gap.
    public func scrobbles(in week: ChartWeek) -> [Scrobble] {
        let index = Self.index(of: week.from, after: firstWeek)
        guard week.from >= firstWeek.from, week.from == firstWeek.from + Int64(index) * LastFMWeekCalendar.weekLength else { return [] }
        if let gap = listening.gap, gap.contains(week.from) { return [] }
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index))
        var plays: [(album: DemoCatalog.Album, tracks: Int)] = []
        // Once a heavy repeat is over, its album is left alone for good.
        let leftAlone: DemoCatalog.Album? = listening.heavyRepeat.flatMap { week.from >= $0.until ? repeatedAlbum : nil }

        // Albums in rotation: discovered recently, fading week by week.
        for album in catalog.albums(discoveredBetween: index - 30, and: index) {
            let age = index - album.discoveredWeek
            let listens = Double(album.intensity) * listening.rotation * Self.fade(age: age, halfLife: album.halfLife)
            let whole = Int(listens)
            let extra = rng.unit() < listens - Double(whole) ? 1 : 0
            for _ in 0..<(whole + extra) { plays.append((album, album.tracks.count - Int(rng.next() % 3))) }
        }
        // Old favourites resurfacing.
        for _ in 0..<Int(rng.next() % 4) {
            if let album = catalog.randomDiscovered(before: index - 30, using: &rng), album.isFavourite, album != leftAlone {
                plays.append((album, album.tracks.count))
            }
        }
        // Single plays from anywhere in the discovered catalog.
        let singles = listening.singles
        for _ in 0..<(singles.lowerBound + Int(rng.next() % UInt64(max(1, singles.count)))) {
            if let album = catalog.randomDiscovered(before: index, using: &rng), album != leftAlone {
                plays.append((album, 1))
            }
        }
        // The album played over and over, whole, every week of its years.
        if let heavy = listening.heavyRepeat, let album = repeatedAlbum, week.from >= heavy.from, week.from < heavy.until {
            for _ in 0..<heavy.listens(in: week, seed: seed) { plays.append((album, album.tracks.count)) }
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

    /// - Parameters:
    ///   - albumCount: albums found in each era of `weeks` weeks.
    ///   - eras: how many such eras follow one another; the albums of the
    ///     first do not depend on how many follow.
    init(seed: UInt64, taste: DemoTaste = .indie, albumCount: Int, weeks: Int, eras: Int = 1) {
        var rng = SplitMix64(seed: seed)
        var artists: [String] = []
        var albums: [Album] = []
        var usedNames = Set<String>()
        for era in 0..<eras {
            for _ in 0..<albumCount {
                // Some artists release several albums over the years.
                let artist: String
                if !artists.isEmpty, rng.unit() < 0.35 {
                    artist = artists[Int(rng.next() % UInt64(artists.count))]
                } else {
                    artist = taste.artist(using: &rng)
                    artists.append(artist)
                }
                var name = taste.album(using: &rng)
                while usedNames.contains(artist + name) { name = taste.album(using: &rng) }
                usedNames.insert(artist + name)
                let trackCount = 7 + Int(rng.next() % 8)
                var tracks: [String] = []
                tracks.reserveCapacity(trackCount)
                for _ in 0..<trackCount { tracks.append(taste.track(using: &rng)) }
                let roll = rng.unit()
                albums.append(Album(
                    artist: artist,
                    name: name,
                    tracks: tracks,
                    discoveredWeek: era * weeks + Int(rng.next() % UInt64(weeks)),
                    intensity: roll < 0.2 ? 3 + Int(rng.next() % 3) : roll < 0.6 ? 1 + Int(rng.next() % 2) : 0,
                    halfLife: 1 + Int(rng.next() % 4),
                    isFavourite: rng.unit() < 0.15
                ))
            }
        }
        // By week, then artist, then title (no two albums share both):
        // grouped by week first, so only the few albums of one week are
        // compared. A sort of the whole list, generic and copying albums,
        // was most of the cost of a catalogue in a debug build, and every
        // fake Last.fm and every composition makes one.
        var byWeek = [[Album]](repeating: [], count: weeks * eras)
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

    /// The first album found in or after `week` (the last one when none is).
    func firstDiscovered(from week: Int) -> Album? {
        let index = firstIndex(discoveredFrom: week)
        return index < albums.count ? albums[index] : albums.last
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
