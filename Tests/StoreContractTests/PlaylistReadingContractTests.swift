import Foundation
import Testing
@testable import VinylogueCore
@testable import Stores

/// What playlists read from the archive, on both stores: a week's albums
/// in chart order, an album's life across its spellings and weeks, and
/// rediscover's finds each with its best week's tracks.
@Suite struct PlaylistReadingContractTests {
    typealias Backend = StoreContractTests.Backend
    /// Monday 2 March 2026, noon UTC.
    static let now = Date(timeIntervalSince1970: 1_772_452_800)
    static let week = LastFMWeekCalendar.week(containing: Int64(ChartWeekFinder(timeZone: .gmt).target(yearsAgo: 3, from: now)
        .timeIntervalSince1970.rounded(.down)))

    /// Tidewater in three weeks (its deluxe edition in the last, with a
    /// track the others lack), Nootropics in the middle one.
    static func history() -> [Scrobble] {
        let length = LastFMWeekCalendar.weekLength
        func play(_ week: Int64, _ minute: Int64, _ album: String, _ track: String, artist: String = "Vetiver") -> Scrobble {
            Scrobble(instant: Self.week.from + week * length + minute * 60, artist: artist, album: album, track: track)
        }
        return [
            play(0, 1, "Tidewater", "Rolling Sea"), play(0, 2, "Tidewater", "Wonder Why"), play(0, 3, "Tidewater", "Rolling Sea"),
            play(1, 1, "Nootropics", "Brains", artist: "Lower Dens"), play(1, 5, "Tidewater", "Wonder Why"),
            play(30, 1, "Tidewater (Deluxe Edition)", "Hook Moves"), play(30, 2, "Tidewater (Deluxe Edition)", "Rolling Sea"),
        ]
    }

    @Test(arguments: Backend.allCases)
    func aWeekAnAlbumsLifeAndRediscoverReadAsPlaylists(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let ana = try Username("ana"), archive = stores.scrobbles
            try await archive.store(Self.history(), of: ana, origin: .lastFMExport)

            let week = try #require(try await archive.weekPlaylist(of: ana, yearsAgo: 3, now: Self.now, timeZone: .gmt))
            #expect(week.week == Self.week)
            #expect(week.albums.map(\.name) == ["Tidewater"])
            #expect(week.albums[0].tracks.map(\.title) == ["Rolling Sea", "Wonder Why"])

            // Asked by another spelling: the album's every spelling, over all its weeks, first played first.
            let life = try #require(try await archive.albumPlaylist(of: ana, artist: "VETIVER", album: "tidewater (deluxe edition)"))
            #expect(life.albums.count == 1 && life.albums[0].plays == 6)
            #expect(life.albums[0].tracks.map(\.title) == ["Rolling Sea", "Wonder Why", "Hook Moves"])
            #expect(life.title.hasPrefix("Vinylogue — Tidewater"))
            #expect(life.fileStem.hasPrefix("album-Vetiver-Tidewater"))
            #expect(try await archive.albumPlaylist(of: ana, artist: "Vetiver", album: "Never Made") == nil)
            #expect(try await archive.albumPlaylist(of: try Username("nobody"), artist: "Vetiver", album: "Tidewater") == nil)

            // Each find with the tracks of its best week only.
            let next = ChartWeek(from: Self.week.to, to: Self.week.to + LastFMWeekCalendar.weekLength)
            let finds = [
                Rediscoveries.Find(artist: "Lower Dens", name: "Nootropics", mbid: nil, plays: 1, yearsAgo: 3, bestWeek: next, bestWeekPlays: 1),
                Rediscoveries.Find(artist: "Vetiver", name: "Tidewater", mbid: nil, plays: 4, yearsAgo: 3, bestWeek: Self.week, bestWeekPlays: 3),
            ]
            let rediscover = try await archive.rediscoverPlaylist(of: ana, finds: finds)
            #expect(rediscover.albums.map(\.name) == ["Nootropics", "Tidewater"])
            #expect(rediscover.albums.map { $0.tracks.map(\.title) } == [["Brains"], ["Rolling Sea", "Wonder Why"]])
        }
    }
}
