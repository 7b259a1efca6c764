import Foundation

/// "This week, years ago" as something to play: the week's albums in
/// chart order, each with the tracks the person played from it that
/// week, in the order they first played them, with the MusicBrainz ids
/// their listens carry. What playlist files (`PlaylistFile`) are made of.
public struct WeekPlaylist: Sendable, Hashable {
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

    /// The playlist of `week` from its album chart `entries` (in rank
    /// order) and the week's `scrobbles` (in any order), grouped as
    /// `folding` groups albums (the chart's own grouping).
    public static func build(user: Username, week: ChartWeek, yearsAgo: Int, entries: [ChartEntry], scrobbles: [Scrobble],
                             folding: AlbumFolding = .editions) -> WeekPlaylist {
        var names = ScrobbleTally.FoldedNames(folding)
        var place: [String: Int] = [:]
        for (index, entry) in entries.enumerated() where !entry.name.isEmpty {
            let key = names.folded(.album, artist: entry.artist, name: entry.name).key
            if place[key] == nil { place[key] = index }
        }
        var tracks = [[Track]](repeating: [], count: entries.count)
        var seen = [Set<String>](repeating: [], count: entries.count)
        for s in scrobbles.sorted(by: { ($0.instant, $0.artist, $0.track) < ($1.instant, $1.artist, $1.track) }) where !s.album.isEmpty {
            guard let index = place[names.folded(.album, artist: s.artistOfAlbum, name: s.album).key] else { continue }
            let same = names.folded(.track, artist: s.artist, name: s.track).key
            guard seen[index].insert(same).inserted else { continue }
            tracks[index].append(Track(title: s.track, artist: s.artist, album: s.album, recordingMBID: Self.mbid(s.trackMBID),
                                       releaseMBID: Self.mbid(s.albumMBID)))
        }
        let albums = entries.indices.map { Album(artist: entries[$0].artist, name: entries[$0].name, plays: entries[$0].plays, tracks: tracks[$0]) }
        return WeekPlaylist(user: user, week: week, yearsAgo: yearsAgo, albums: albums)
    }

    /// `text` when it is a MusicBrainz id (a UUID, lower case), else nil:
    /// an import's id field may hold anything, and ids become addresses.
    static func mbid(_ text: String?) -> String? {
        guard let text, let uuid = UUID(uuidString: text) else { return nil }
        return uuid.uuidString.lowercased()
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

    /// `playlist` in this format; `labels` say the week's day.
    public func data(_ playlist: WeekPlaylist, labels: WeekLabels) -> Data {
        switch self {
        case .xspf: Data(Self.xspf(playlist, labels: labels).utf8)
        case .jspf: Self.jspf(playlist, labels: labels)
        }
    }

    /// A file name for `playlist`, its week named as permalinks name it:
    /// "vinylogue-ana-2020-11-13.xspf".
    public func fileName(_ playlist: WeekPlaylist, labels: WeekLabels) -> String {
        let safe = playlist.user.value.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII ? String($0) : "-" }.joined()
        return "vinylogue-\(safe)-\(labels.permalinkDay(of: playlist.week)).\(fileExtension)"
    }

    static let recordingBase = "https://musicbrainz.org/recording/"

    static func xspf(_ playlist: WeekPlaylist, labels: WeekLabels) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n"
        xml += "  <title>\(XMLText.escaped(playlist.title))</title>\n"
        xml += "  <creator>\(XMLText.escaped(playlist.user.value))</creator>\n"
        xml += "  <annotation>\(XMLText.escaped(playlist.annotation(labels: labels)))</annotation>\n"
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

    static func jspf(_ playlist: WeekPlaylist, labels: WeekLabels) -> Data {
        let file = JSPF(playlist: JSPF.Playlist(
            title: playlist.title, creator: playlist.user.value, annotation: playlist.annotation(labels: labels),
            track: playlist.tracks.map { JSPF.Track(title: $0.title, creator: $0.artist, album: $0.album,
                                                    identifier: $0.recordingMBID.map { [recordingBase + $0] }) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(file)) ?? Data()
    }
}
