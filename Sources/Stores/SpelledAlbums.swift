import VinylogueCore

/// One album of a person's archive with every spelling its listens carry:
/// what "editions are one album" (`AlbumFolding`) joined, for
/// `vinylogue albums --spellings` and the album page's "Also played as".
public struct SpelledAlbum: Sendable, Hashable, Codable {
    /// One spelling as scrobbled, and its plays.
    public struct Spelling: Sendable, Hashable, Codable {
        public let artist: String
        public let album: String
        public let plays: Int

        public init(artist: String, album: String, plays: Int) {
            self.artist = artist
            self.album = album
            self.plays = plays
        }
    }

    /// The album's grouping key (`ScrobbleTally.key`).
    public let key: String
    /// As it is named: its most played spelling.
    public let artist: String
    public let name: String
    public let plays: Int
    /// Every spelling, most played first (ties by spelling).
    public let spellings: [Spelling]

    /// `spellings` (each once) grouped into albums as `folding` groups
    /// them: most played first, ties by name as charts order them.
    public static func grouped(_ spellings: [Spelling], folding: AlbumFolding = .editions) -> [SpelledAlbum] {
        var byKey: [String: (folded: AlbumFolding.Folded, spellings: [Spelling])] = [:]
        for spelling in spellings where !spelling.album.isEmpty {
            let folded = folding.folded(.album, artist: spelling.artist, name: spelling.album)
            byKey[folded.key, default: (folded, [])].spellings.append(spelling)
        }
        let albums = byKey.map { key, group in
            let ordered = group.spellings.sorted { a, b in
                if a.plays != b.plays { return a.plays > b.plays }
                return (a.artist, a.album) < (b.artist, b.album)
            }
            return (folded: group.folded, album: SpelledAlbum(key: key, artist: ordered[0].artist, name: ordered[0].album,
                                                              plays: ordered.reduce(0) { $0 + $1.plays }, spellings: ordered))
        }
        return albums.sorted { a, b in
            if a.album.plays != b.album.plays { return a.album.plays > b.album.plays }
            if a.folded.artist != b.folded.artist { return a.folded.artist < b.folded.artist }
            return a.folded.name < b.folded.name
        }.map(\.album)
    }

    /// Counts the spellings of the album keyed `key` (as `folding` keys
    /// albums) among `scrobbles` (its weeks' listens, any others skipped):
    /// the album with each spelling and its plays; nil when none is its.
    public struct Counting {
        public let key: String
        public let folding: AlbumFolding
        private var plays: [SpellingPair: Int] = [:]
        private var belongs: [SpellingPair: Bool] = [:]

        private struct SpellingPair: Hashable {
            let artist: String
            let album: String
        }

        public init(key: String, folding: AlbumFolding) {
            self.key = key
            self.folding = folding
        }

        public mutating func add(_ scrobble: Scrobble) {
            add(artist: scrobble.artistOfAlbum, album: scrobble.album, plays: 1)
        }

        /// `plays` of the spelling `artist` / `album` (a database's count).
        public mutating func add(artist: String, album: String, plays count: Int) {
            guard !album.isEmpty else { return }
            let pair = SpellingPair(artist: artist, album: album)
            let isIts: Bool
            if let known = belongs[pair] {
                isIts = known
            } else {
                isIts = folding.folded(.album, artist: pair.artist, name: pair.album).key == key
                belongs[pair] = isIts
            }
            if isIts { plays[pair, default: 0] += count }
        }

        public var album: SpelledAlbum? {
            SpelledAlbum.grouped(plays.map { Spelling(artist: $0.key.artist, album: $0.key.album, plays: $0.value) }, folding: folding).first
        }
    }
}

