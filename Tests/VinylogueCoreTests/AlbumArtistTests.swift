import Foundation
import Testing
@testable import VinylogueCore

/// An album counts for its album artist where the listen names one, and
/// for its track artist (without featured credits) where it does not.
@Suite struct AlbumArtistTests {
    static let user = try! Username("ana")
    static let week = ChartWeek(from: 1_700_000_000, to: 1_700_604_800)

    static func play(_ n: Int, _ artist: String, _ album: String, albumArtist: String? = nil) -> Scrobble {
        Scrobble(instant: week.from + Int64(n) * 300, artist: artist, album: album, track: "Track \(n)", albumArtist: albumArtist)
    }

    @Test func anEmptyAlbumArtistIsNone() {
        #expect(Self.play(0, "Blur", "Parklife", albumArtist: "").albumArtist == nil)
        #expect(Self.play(0, "Blur", "Parklife").artistOfAlbum == "Blur")
        #expect(Self.play(0, "Blur", "Now 50", albumArtist: "Various Artists").artistOfAlbum == "Various Artists")
    }

    @Test func aCompilationsTracksAreOneAlbumButEachArtistCountsInTheArtistChart() {
        let plays = ["Blur", "Oasis", "Pulp", "Blur"].enumerated().map { Self.play($0, $1, "Now 50", albumArtist: "Various Artists") }
            + [Self.play(9, "Blur", "Now 50")]
        let albums = ScrobbleTally.chart(.album, user: Self.user, week: Self.week, scrobbles: plays)
        #expect(albums.entries.map { "\($0.artist) – \($0.name) \($0.plays)" } == ["Various Artists – Now 50 4", "Blur – Now 50 1"])
        let artists = ScrobbleTally.chart(.artist, user: Self.user, week: Self.week, scrobbles: plays)
        #expect(artists.entries.map { "\($0.name) \($0.plays)" } == ["Blur 3", "Oasis 1", "Pulp 1"])
        let tracks = ScrobbleTally.chart(.track, user: Self.user, week: Self.week, scrobbles: plays)
        #expect(Set(tracks.entries.map(\.artist)) == ["Blur", "Oasis", "Pulp"])
        #expect(ScrobbleTally.albumWeeks(artist: "various artists", album: "NOW 50", in: plays).map(\.plays) == [4])
    }

    /// A guest on the track, or a band whose track credit the rule cannot
    /// read, is the album artist's album when the player names one.
    @Test func theAlbumArtistJoinsWhatTheTrackCreditsSplit() {
        let plays = [Self.play(0, "Santana feat. Rob Thomas", "Supernatural"),
                     Self.play(1, "Santana", "Supernatural"),
                     Self.play(2, "Santana x The Product G&B", "Supernatural", albumArtist: "Santana"),
                     Self.play(3, "Simon & Garfunkel", "Bookends")]
        let albums = ScrobbleTally.chart(.album, user: Self.user, week: Self.week, scrobbles: plays)
        #expect(albums.entries.map { "\($0.artist) – \($0.name) \($0.plays)" } == ["Santana – Supernatural 3", "Simon & Garfunkel – Bookends 1"])
    }

    @Test func theReleaseAListenTiesIsItsAlbumArtists() throws {
        let s = Scrobble(instant: 0, artist: "Pulp", album: "Now 50", track: "Disco 2000",
                         albumMBID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", albumArtist: "Various Artists")
        let release = try #require(AlbumReleases.Release(s))
        #expect(release.artist == "Various Artists")
        #expect(release.tie.key == AlbumIdentity.key(artist: "Various Artists", album: "Now 50"))
    }

    @Test func aListenNamesItsReleaseAndItsReleaseGroup() {
        let s = Scrobble(instant: 0, artist: "Yann Tiersen", album: "Amélie", track: "T", albumMBID: "AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee",
                         releaseGroupMBID: "2d3f7c1e-44b0-4b2f-9a7e-0d1c6a5b4e33")
        #expect(AlbumReleases.Release.all(s).map(\.mbid) == ["aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "2d3f7c1e-44b0-4b2f-9a7e-0d1c6a5b4e33"])
        #expect(AlbumReleases.Release.all(Scrobble(instant: 0, artist: "A", album: "", track: "T", releaseGroupMBID: "2d3f7c1e-44b0-4b2f-9a7e-0d1c6a5b4e33")).isEmpty)
        #expect(Scrobble(instant: 0, artist: "A", album: "B", track: "T", releaseGroupMBID: "").releaseGroupMBID == nil)
    }

    @Test func aListenWithAnAlbumArtistSurvivesJSON() throws {
        let s = Self.play(0, "Pulp", "Now 50", albumArtist: "Various Artists")
        #expect(try JSONDecoder().decode(Scrobble.self, from: JSONEncoder().encode(s)) == s)
        // One stored before album artists were kept reads as naming none.
        let old = #"{"instant":5,"artist":"Pulp","album":"Now 50","track":"Disco 2000"}"#
        #expect(try JSONDecoder().decode(Scrobble.self, from: Data(old.utf8)).albumArtist == nil)
    }
}
