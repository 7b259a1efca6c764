import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import VinylogueCore

/// This week, years ago, as a playlist: albums in chart order, each with
/// the tracks played from it that week, first played first; and the files
/// it is written as, read back by a real parser.
@Suite struct WeekPlaylistTests {
    static let week = ChartWeek(from: 1_605_441_600, to: 1_605_441_600 + LastFMWeekCalendar.weekLength)
    static let recording = "4A8B0E5C-1B3D-4C2E-9F10-2B3C4D5E6F70"

    static func play(_ minutes: Int64, _ artist: String, _ album: String, _ track: String, mbid: String? = nil,
                     albumArtist: String? = nil) -> Scrobble {
        Scrobble(instant: week.from + minutes * 60, artist: artist, album: album, track: track, trackMBID: mbid, albumArtist: albumArtist)
    }

    static var scrobbles: [Scrobble] {
        [play(50, "Low", "Things We Lost in the Fire", "Sunflower"),
         play(10, "Low", "Things We Lost in the Fire (Deluxe Edition)", "Dinosaur Act", mbid: recording),
         play(20, "Low", "Things We Lost in the Fire", "Sunflower"),
         play(30, "Low", "Things We Lost in the Fire", "sunflower"),
         play(5, "Bill Callahan", "Apocalypse", "Drover", mbid: "not-an-id\"><script>"),
         play(15, "Someone & <Friends>", "Tom's \"Mix\"\u{1}", "A & B"),
         play(25, "Nobody", "", "No album")]
    }

    static let entries = [ChartEntry(rank: 1, artist: "Low", name: "Things We Lost in the Fire", plays: 4),
                          ChartEntry(rank: 2, artist: "Bill Callahan", name: "Apocalypse", plays: 1),
                          ChartEntry(rank: 3, artist: "Someone & <Friends>", name: "Tom's \"Mix\"\u{1}", plays: 1)]

    static func playlist() throws -> WeekPlaylist {
        WeekPlaylist.build(user: try Username("ana"), week: week, yearsAgo: 5, entries: entries, scrobbles: scrobbles.shuffled())
    }

    @Test func albumsInChartOrderWithTheirTracksFirstPlayedFirstAndEditionsFolded() throws {
        let playlist = try Self.playlist()
        #expect(playlist.title == "Vinylogue — this week, 5 years ago")
        #expect(playlist.albums.map(\.name) == ["Things We Lost in the Fire", "Apocalypse", "Tom's \"Mix\"\u{1}"])
        // The deluxe edition's track belongs to the album; a track played
        // three times (in two spellings of its case) is there once.
        #expect(playlist.albums[0].tracks.map(\.title) == ["Dinosaur Act", "Sunflower"])
        #expect(playlist.albums[0].tracks[0].recordingMBID == Self.recording.lowercased())
        // An id that is no MusicBrainz id is left out.
        #expect(playlist.albums[1].tracks.map(\.recordingMBID) == [nil])
        #expect(playlist.tracks.count == 4)
    }

    @Test func theXSPFParsesBackWithEveryTrackInOrder() throws {
        let playlist = try Self.playlist()
        let data = PlaylistFile.xspf.data(playlist.playlist(labels: WeekLabels(timeZone: .gmt)))
        let read = XSPFReading()
        let parser = XMLParser(data: data)
        parser.delegate = read
        #expect(parser.parse(), "\(String(decoding: data, as: UTF8.self))")
        #expect(read.titles == ["Vinylogue — this week, 5 years ago", "Dinosaur Act", "Sunflower", "Drover", "A & B"])
        #expect(read.creators == ["ana", "Low", "Low", "Bill Callahan", "Someone & <Friends>"])
        // The control character XML cannot carry is replaced (`XMLText`).
        #expect(read.albums.last == "Tom's \"Mix\"\u{FFFD}")
        #expect(read.identifiers == ["https://musicbrainz.org/recording/" + Self.recording.lowercased()])
        #expect(read.root == "playlist" && read.tracks == 4)
        #expect(PlaylistFile.xspf.fileName(playlist.playlist(labels: WeekLabels(timeZone: .gmt))) == "vinylogue-ana-2020-11-16.xspf")
    }

    @Test func theJSPFHasTheShapeListenBrainzImports() throws {
        let playlist = try Self.playlist()
        let data = PlaylistFile.jspf.data(playlist.playlist(labels: WeekLabels(timeZone: .gmt)))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let body = try #require(object["playlist"] as? [String: Any])
        #expect(body["title"] as? String == "Vinylogue — this week, 5 years ago")
        #expect(body["creator"] as? String == "ana")
        let tracks = try #require(body["track"] as? [[String: Any]])
        #expect(tracks.map { $0["title"] as? String } == ["Dinosaur Act", "Sunflower", "Drover", "A & B"])
        #expect(tracks[0]["identifier"] as? [String] == ["https://musicbrainz.org/recording/" + Self.recording.lowercased()])
        #expect(tracks[1]["identifier"] == nil)
        #expect(tracks[3]["album"] as? String == "Tom's \"Mix\"\u{1}")
    }

    @Test func aWeekWithNoChartIsAnEmptyPlaylist() throws {
        let empty = WeekPlaylist.build(user: try Username("ana"), week: Self.week, yearsAgo: 1, entries: [], scrobbles: Self.scrobbles)
        #expect(empty.albums.isEmpty && empty.title == "Vinylogue — this week, 1 year ago")
    }

    /// A year's playlist from what the year's page reads: its albums
    /// ranked (editions one album, as the person groups them), each with
    /// its tracks summed over the months, most played first; an album's
    /// rows without an album name left out; at most `limit` albums.
    @Test func aYearsMostPlayedAlbumsWithTheirTracksMostPlayedFirst() throws {
        typealias Row = YearListening.Row
        let rows = [
            Row(month: 0, artist: "Low", albumArtist: nil, album: "HEY WHAT", track: "White Horses", plays: 3, albumMBID: nil),
            Row(month: 5, artist: "Low", albumArtist: nil, album: "HEY WHAT (Deluxe Edition)", track: "Days Like These", plays: 4, albumMBID: nil),
            Row(month: 6, artist: "Low", albumArtist: nil, album: "HEY WHAT", track: "White Horses", plays: 2, albumMBID: nil),
            Row(month: 1, artist: "Vetiver", albumArtist: nil, album: "Tidewater", track: "Rolling Sea", plays: 6, albumMBID: nil),
            Row(month: 2, artist: "Guest", albumArtist: "Bonobo", album: "Fragments", track: "Rosewood", plays: 2, albumMBID: nil),
            Row(month: 3, artist: "Nobody", albumArtist: nil, album: "", track: "No album", plays: 50, albumMBID: nil),
        ]
        let listening = YearListening(rows: rows.shuffled(), quarterHours: [:], albumSpans: [:], playedJustBefore: [], previousPlays: 0,
                                      folding: .editions)
        let ana = try Username("ana")
        let year = AlbumPlaylist.year(user: ana, year: 2024, listening: listening)
        #expect(year.title == "Vinylogue — 2024" && year.fileStem == "2024")
        #expect(year.annotation == "ana’s 3 most played albums of 2024, each with the tracks played from it that year, most played first.")
        #expect(year.albums.map(\.name) == ["HEY WHAT", "Tidewater", "Fragments"])
        #expect(year.albums.map(\.plays) == [9, 6, 2])
        // White Horses 3 + 2 = 5 plays, after Days Like These's 4? No: 5 > 4, first.
        #expect(year.albums[0].tracks.map(\.title) == ["White Horses", "Days Like These"])
        #expect(year.albums[2].artist == "Bonobo", "the album artist, not the track's")
        #expect(AlbumPlaylist.year(user: ana, year: 2024, listening: listening, limit: 1).albums.map(\.name) == ["HEY WHAT"])
        // Kept apart, the deluxe edition is an album of its own.
        let apart = YearListening(rows: rows, quarterHours: [:], albumSpans: [:], playedJustBefore: [], previousPlays: 0, folding: .asSpelled)
        #expect(AlbumPlaylist.year(user: ana, year: 2024, listening: apart).albums.map(\.name)
            == ["Tidewater", "HEY WHAT", "HEY WHAT (Deluxe Edition)", "Fragments"])
    }

    /// One album of 40,000 different tracks in a year (the probe found the
    /// year's playlist quadratic: 60,000 took minutes): each track once,
    /// its plays summed, in one pass.
    @Test(.timeLimit(.minutes(1))) func aYearOfManyTracksIsCountedInOnePass() throws {
        let rows = (0..<40_000).flatMap { n in
            [YearListening.Row(month: 0, artist: "Mega", albumArtist: nil, album: "Mega Album", track: "Track \(n)", plays: 1, albumMBID: nil),
             YearListening.Row(month: 1, artist: "Mega", albumArtist: nil, album: "Mega Album", track: "Track \(n)", plays: n % 3, albumMBID: nil)]
        }
        let listening = YearListening(rows: rows, quarterHours: [:], albumSpans: [:], playedJustBefore: [], previousPlays: 0, folding: .editions)
        let year = AlbumPlaylist.year(user: try Username("mega"), year: 2025, listening: listening)
        let tracks = try #require(year.albums.first?.tracks)
        #expect(tracks.count == 40_000)
        // Most played first: plays are 1 + n % 3.
        let plays = tracks.map { 1 + (Int($0.title.dropFirst(6)) ?? 0) % 3 }
        #expect(plays == plays.sorted(by: >) && plays.first == 3 && plays.last == 1)
        #expect(Set(tracks.map(\.title)).count == 40_000)
    }

    @Test func fileNamesAreSafeASCII() throws {
        #expect(AlbumPlaylist.fileSafe("album-The Beatles-Abbey Road (Remastered)") == "album-The-Beatles-Abbey-Road-Remastered")
        #expect(AlbumPlaylist.fileSafe("album-Sigur Rós-()") == "album-Sigur-R-s")
        #expect(AlbumPlaylist.fileSafe("../\"\r\nx") == "x")
        #expect(AlbumPlaylist.fileSafe(String(repeating: "a", count: 200)).count == 60)
        let playlist = AlbumPlaylist(user: try Username("ana"), title: "t", annotation: "a", fileStem: "album-\"; rm -rf", albums: [])
        #expect(PlaylistFile.xspf.fileName(playlist) == "vinylogue-ana-album-rm-rf.xspf")
    }
}

/// Collects what an XSPF file holds, element by element.
final class XSPFReading: NSObject, XMLParserDelegate {
    var root: String?
    var titles: [String] = [], creators: [String] = [], albums: [String] = [], identifiers: [String] = []
    var tracks = 0
    private var text = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if root == nil { root = name }
        if name == "track" { tracks += 1 }
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "title": titles.append(text)
        case "creator": creators.append(text)
        case "album": albums.append(text)
        case "identifier": identifiers.append(text)
        default: break
        }
    }
}
