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
}
