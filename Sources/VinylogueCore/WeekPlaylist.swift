import Foundation

/// Albums to play again, each with the tracks the person played from it
/// in the order they first played them (the MusicBrainz ids their
/// listens carry with them): a week's chart (`WeekPlaylist`), an album's
/// whole life, a year's most played albums, the albums to rediscover.
/// What playlist files (`PlaylistFile`), music servers and ListenBrainz
/// are given.
public struct AlbumPlaylist: Sendable, Hashable {
    public struct Track: Sendable, Hashable {
        public let title: String
        public let artist: String
        public let album: String
        /// A recording id, only when it is a well-formed MusicBrainz id.
        public let recordingMBID: String?
        public let releaseMBID: String?
    }

    public struct Album: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let plays: Int
        public let tracks: [Track]
    }

    public let user: Username
    /// "Vinylogue — this week, 5 years ago".
    public let title: String
    /// What it holds, in a sentence (the files' and ListenBrainz's annotation).
    public let annotation: String
    /// What its files are named after, in file-name-safe ASCII: "2020-11-13", "2019".
    public let fileStem: String
    public let albums: [Album]

    public init(user: Username, title: String, annotation: String, fileStem: String, albums: [Album]) {
        self.user = user
        self.title = title
        self.annotation = annotation
        self.fileStem = Self.fileSafe(fileStem)
        self.albums = albums
    }

    /// Every track, album after album.
    public var tracks: [Track] { albums.flatMap(\.tracks) }

    /// The playlist of `albums` (in their order, the first spelling of
    /// each album kept), each with the tracks of `scrobbles` (in any order)
    /// played from it, in the order first played, grouped as `folding`
    /// groups albums. An album nothing was played from stays (a library
    /// may still hold it, whole).
    public static func build(user: Username, title: String, annotation: String, fileStem: String,
                             albums listed: [(artist: String, name: String, plays: Int)], scrobbles: [Scrobble],
                             folding: AlbumFolding = .editions) -> AlbumPlaylist {
        var names = ScrobbleTally.FoldedNames(folding)
        var place: [String: Int] = [:]
        for (index, album) in listed.enumerated() where !album.name.isEmpty {
            let key = names.folded(.album, artist: album.artist, name: album.name).key
            if place[key] == nil { place[key] = index }
        }
        var tracks = [[Track]](repeating: [], count: listed.count)
        var seen = [Set<String>](repeating: [], count: listed.count)
        for s in scrobbles.sorted(by: { ($0.instant, $0.artist, $0.track) < ($1.instant, $1.artist, $1.track) }) where !s.album.isEmpty {
            guard let index = place[names.folded(.album, artist: s.artistOfAlbum, name: s.album).key] else { continue }
            let same = names.folded(.track, artist: s.artist, name: s.track).key
            guard seen[index].insert(same).inserted else { continue }
            tracks[index].append(Track(title: s.track, artist: s.artist, album: s.album, recordingMBID: Self.mbid(s.trackMBID),
                                       releaseMBID: Self.mbid(s.albumMBID)))
        }
        let albums = listed.indices.map { Album(artist: listed[$0].artist, name: listed[$0].name, plays: listed[$0].plays, tracks: tracks[$0]) }
        return AlbumPlaylist(user: user, title: title, annotation: annotation, fileStem: fileStem, albums: albums)
    }

    /// `text` when it is a MusicBrainz id (a UUID, lower case), else nil:
    /// an import's id field may hold anything, and ids become addresses.
    static func mbid(_ text: String?) -> String? {
        guard let text, let uuid = UUID(uuidString: text) else { return nil }
        return uuid.uuidString.lowercased()
    }

    /// `text` with every run of characters other than ASCII letters and
    /// digits made one "-", none at either end, at most 60 long: "Abbey
    /// Road (Remastered)" → "Abbey-Road-Remastered".
    public static func fileSafe(_ text: String) -> String {
        var safe = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                safe.unicodeScalars.append(scalar)
            } else if !safe.hasSuffix("-") {
                safe += "-"
            }
        }
        let trimmed = safe.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return String(trimmed.prefix(60))
    }
}

/// "This week, years ago" as something to play: the week's albums in
/// chart order, each with the tracks the person played from it that
/// week. `playlist(labels:)` is what files and servers are given.
public struct WeekPlaylist: Sendable, Hashable {
    public typealias Track = AlbumPlaylist.Track
    public typealias Album = AlbumPlaylist.Album

    public let user: Username
    public let week: ChartWeek
    public let yearsAgo: Int
    public let albums: [Album]

    /// Every track, album after album.
    public var tracks: [Track] { albums.flatMap(\.tracks) }

    /// "Vinylogue — this week, 5 years ago".
    public var title: String { Self.title(yearsAgo: yearsAgo) }

    /// The title of a week's playlist `yearsAgo` years back.
    public static func title(yearsAgo: Int) -> String {
        "Vinylogue — this week, " + (yearsAgo == 1 ? "1 year ago" : "\(yearsAgo) years ago")
    }

    /// "ana’s albums of Nov 12 – 19, 2020, in chart order, each with the
    /// tracks played from it that week."
    public func annotation(labels: WeekLabels) -> String {
        "\(user.value)’s albums of \(labels.range(of: week)), in chart order, each with the tracks played from it that week."
    }

    /// As something to play: titled for the week, its files named for its day.
    public func playlist(labels: WeekLabels) -> AlbumPlaylist {
        AlbumPlaylist(user: user, title: title, annotation: annotation(labels: labels), fileStem: labels.permalinkDay(of: week), albums: albums)
    }

    /// The playlist of `week` from its album chart `entries` (in rank
    /// order) and the week's `scrobbles` (in any order), grouped as
    /// `folding` groups albums (the chart's own grouping).
    public static func build(user: Username, week: ChartWeek, yearsAgo: Int, entries: [ChartEntry], scrobbles: [Scrobble],
                             folding: AlbumFolding = .editions) -> WeekPlaylist {
        let built = AlbumPlaylist.build(user: user, title: "", annotation: "", fileStem: "",
                                        albums: entries.map { ($0.artist, $0.name, $0.plays) }, scrobbles: scrobbles, folding: folding)
        return WeekPlaylist(user: user, week: week, yearsAgo: yearsAgo, albums: built.albums)
    }
}

/// A playlist written as a file people's players and services read.
public enum PlaylistFile: String, Sendable, CaseIterable {
    /// XSPF (XML Shareable Playlist Format), version 1.
    case xspf
    /// JSPF, XSPF as JSON, in the shape ListenBrainz imports.
    case jspf

    public var mediaType: String {
        switch self {
        case .xspf: "application/xspf+xml"
        case .jspf: "application/jspf+json"
        }
    }

    public var fileExtension: String { rawValue }

    /// `playlist` in this format.
    public func data(_ playlist: AlbumPlaylist) -> Data {
        switch self {
        case .xspf: Data(Self.xspf(playlist).utf8)
        case .jspf: Self.jspf(playlist)
        }
    }

    /// A file name for `playlist`, named for its person and what it holds
    /// (a week as permalinks name it): "vinylogue-ana-2020-11-13.xspf".
    public func fileName(_ playlist: AlbumPlaylist) -> String {
        let safe = playlist.user.value.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII ? String($0) : "-" }.joined()
        return "vinylogue-\(safe)-\(playlist.fileStem).\(fileExtension)"
    }

    static let recordingBase = "https://musicbrainz.org/recording/"

    static func xspf(_ playlist: AlbumPlaylist) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n"
        xml += "  <title>\(XMLText.escaped(playlist.title))</title>\n"
        xml += "  <creator>\(XMLText.escaped(playlist.user.value))</creator>\n"
        xml += "  <annotation>\(XMLText.escaped(playlist.annotation))</annotation>\n"
        xml += "  <trackList>\n"
        for track in playlist.tracks {
            xml += "    <track>\n"
            if let id = track.recordingMBID { xml += "      <identifier>\(recordingBase)\(id)</identifier>\n" }
            xml += "      <title>\(XMLText.escaped(track.title))</title>\n"
            xml += "      <creator>\(XMLText.escaped(track.artist))</creator>\n"
            xml += "      <album>\(XMLText.escaped(track.album))</album>\n"
            xml += "    </track>\n"
        }
        xml += "  </trackList>\n</playlist>\n"
        return xml
    }

    private struct JSPF: Encodable {
        struct Playlist: Encodable {
            let title: String
            let creator: String
            let annotation: String
            let track: [Track]
        }

        struct Track: Encodable {
            let title: String
            let creator: String
            let album: String
            let identifier: [String]?
        }

        let playlist: Playlist
    }

    static func jspf(_ playlist: AlbumPlaylist) -> Data {
        let file = JSPF(playlist: JSPF.Playlist(
            title: playlist.title, creator: playlist.user.value, annotation: playlist.annotation,
            track: playlist.tracks.map { JSPF.Track(title: $0.title, creator: $0.artist, album: $0.album,
                                                    identifier: $0.recordingMBID.map { [recordingBase + $0] }) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(file)) ?? Data()
    }
}

extension AlbumPlaylist {
    /// How many of a year's most played albums its playlist holds.
    public static let yearAlbums = 20

    /// `year`'s most played albums (at most `limit`, as the year's page
    /// ranks them, grouped as `listening.folding` groups them), each with
    /// the tracks played from it that year, most played first. From what
    /// the year's page reads (`YearListening`), so no listen is read again.
    public static func year(user: Username, year: Int, listening: YearListening, limit: Int = yearAlbums) -> AlbumPlaylist {
        var names = ScrobbleTally.FoldedNames(listening.folding)
        var albums = ScrobbleTally.Tally(kind: .album, folding: listening.folding)
        // The same fixed order as the year's page, so the shown spelling is the same.
        let rows = listening.rows.sorted { a, b in
            (a.artistOfAlbum, a.album, a.artist, a.track, a.month) < (b.artistOfAlbum, b.album, b.artist, b.track, b.month)
        }
        for row in rows where !row.album.isEmpty {
            swap(&albums.names, &names)
            albums.add(artist: row.artistOfAlbum, album: row.album, track: row.track, mbid: row.albumMBID, plays: row.plays)
            swap(&albums.names, &names)
        }
        let top = Array(albums.ranked().prefix(limit))
        var place: [String: Int] = [:]
        for (index, album) in top.enumerated() { place[names.folded(.album, artist: album.artist, name: album.name).key] = index }
        // Each album's tracks: plays summed over the months, the first spelling kept.
        var tracks = [[(track: Track, plays: Int)]](repeating: [], count: top.count)
        var trackPlace: [String: Int] = [:]
        for row in rows where !row.album.isEmpty {
            guard let index = place[names.folded(.album, artist: row.artistOfAlbum, name: row.album).key] else { continue }
            let key = "\(index)\u{1F}" + names.folded(.track, artist: row.artist, name: row.track).key
            if let at = trackPlace[key] {
                tracks[index][at].plays += row.plays
            } else {
                trackPlace[key] = tracks[index].count
                tracks[index].append((Track(title: row.track, artist: row.artist, album: row.album, recordingMBID: nil,
                                            releaseMBID: mbid(row.albumMBID)), row.plays))
            }
        }
        let built = top.indices.map { index in
            Album(artist: top[index].artist, name: top[index].name, plays: top[index].plays,
                  tracks: tracks[index].sorted { ($1.plays, $0.track.title) < ($0.plays, $1.track.title) }.map(\.track))
        }
        return AlbumPlaylist(user: user, title: "Vinylogue — \(year)",
                             annotation: "\(user.value)’s \(built.count == 1 ? "most played album" : "\(built.count) most played albums") of \(year), "
                                + "each with the tracks played from it that year, most played first.",
                             fileStem: String(year), albums: built)
    }
}
