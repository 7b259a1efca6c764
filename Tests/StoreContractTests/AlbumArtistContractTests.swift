import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import Sync
@testable import PostgresStore
@testable import SQLiteStore

/// Albums counted for their album artist on both stores: a compilation's
/// tracks by many artists are one album of "Various Artists", while the
/// artist chart still counts each track's own artist; listens without an
/// album artist count for their track artist, as before; the stored
/// listens keep what was sent, and every path that counts (a whole import,
/// one listen at a time, a set-aside listen put back, a span that is not a
/// whole week) agrees with an independent count.
@Suite struct AlbumArtistContractTests {
    typealias Backend = StoreContractTests.Backend
    static let ana = try! Username("ana")
    static let now50 = "Now That's What I Call Music! 50"

    static func start(_ week: Int) -> Int64 { 1_700_000_000 + Int64(week) * 604_800 }

    /// 8 weeks: each week four tracks of a compilation by four artists,
    /// named "Various Artists" as the album artist; two plays of Blur's
    /// own "Parklife" by Blur with no album artist named; and one Blur
    /// track from the compilation played from Last.fm's history (no album
    /// artist), which stays Blur's own "Now 50".
    static func history() -> [Scrobble] {
        var scrobbles: [Scrobble] = []
        for week in 0..<8 {
            for (n, artist) in ["Blur", "Oasis", "Pulp", "Supergrass"].enumerated() {
                scrobbles.append(Scrobble(instant: start(week) + 600 + Int64(n) * 240, artist: artist, album: now50, track: "Hit \(n)",
                                          albumArtist: "Various Artists"))
            }
            for n in 0..<2 {
                scrobbles.append(Scrobble(instant: start(week) + 3_600 + Int64(n) * 240, artist: "Blur", album: "Parklife", track: "Girls & Boys \(n)"))
            }
            scrobbles.append(Scrobble(instant: start(week) + 7_200, artist: "Blur", album: now50, track: "Country House"))
        }
        return scrobbles
    }

    static func expectAlbumArtistCharts(_ archive: any ScrobbleArchive, _ history: [Scrobble],
                                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await AlbumChoiceContractTests.expectCharts(archive, history, weeks: 8, sourceLocation: sourceLocation)
        let week = ChartWeek(from: start(3), to: start(4))
        let albums = try #require(try await archive.charts(.album, of: ana, weeks: [week])?.first, sourceLocation: sourceLocation)
        #expect(albums.entries.map { "\($0.artist) – \($0.name) \($0.plays)" }
                == ["Various Artists – \(now50) 4", "Blur – Parklife 2", "Blur – \(now50) 1"], sourceLocation: sourceLocation)
        let artists = try #require(try await archive.charts(.artist, of: ana, weeks: [week])?.first, sourceLocation: sourceLocation)
        #expect(artists.entries.map { "\($0.name) \($0.plays)" } == ["Blur 4", "Oasis 1", "Pulp 1", "Supergrass 1"],
                "the artist chart counts each track's artist", sourceLocation: sourceLocation)
        // A span that is not a whole Last.fm week is counted from the listens.
        let span = ChartWeek(from: start(3) + 700, to: start(4) - 1)
        let counted = try #require(try await archive.charts(.album, of: ana, weeks: [span])?.first, sourceLocation: sourceLocation)
        #expect(counted.entries.map { "\($0.artist) – \($0.name) \($0.plays)" }
                == ["Various Artists – \(now50) 3", "Blur – Parklife 2", "Blur – \(now50) 1"], sourceLocation: sourceLocation)
    }

    @Test(arguments: Backend.allCases)
    func aCompilationIsOneAlbumOfItsAlbumArtistWhateverWayItIsStored(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana, history = Self.history()
            try await archive.store(history, of: ana, origin: .lastFMExport)
            try await Self.expectAlbumArtistCharts(archive, history)
            // The stored listens keep what was sent.
            let stored = try await archive.scrobbles(of: ana, from: Self.start(0), to: Self.start(8))
            #expect(Set(stored) == Set(history))
            #expect(stored.filter { $0.albumArtist == "Various Artists" }.count == 32)
            // The album's page and its spellings.
            #expect(try await archive.albumWeeks(of: ana, artist: "Various Artists", album: Self.now50)?.map(\.plays) == Array(repeating: 4, count: 8))
            #expect(try await archive.albumWeeks(of: ana, artist: "Blur", album: Self.now50)?.map(\.plays) == Array(repeating: 1, count: 8))
            let spelled = try #require(try await archive.albumSpellings(of: ana, artist: "Various Artists", album: Self.now50))
            #expect(spelled.plays == 32)
            #expect(spelled.spellings.map(\.artist) == ["Various Artists"])
            let all = try #require(try await archive.albumSpellings(of: ana))
            #expect(all.map { "\($0.artist) – \($0.name) \($0.plays)" }
                    == ["Various Artists – \(Self.now50) 32", "Blur – Parklife 16", "Blur – \(Self.now50) 8"])
        }
    }

    @Test(arguments: Backend.allCases)
    func listensOneAtATimeCountAsAWholeImportDoes(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana, history = Self.history()
            for scrobble in history { try await archive.store([scrobble], of: ana, origin: .received) }
            try await Self.expectAlbumArtistCharts(archive, history)
        }
    }

    /// The same play from two sources: the earlier counts, the other is set
    /// aside with its album artist, and forgetting the copy puts it back.
    @Test(arguments: Backend.allCases)
    func aSetAsideListenKeepsItsAlbumArtistAndComesBackWithIt(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana, history = Self.history()
            try await archive.store(history, of: ana, origin: .lastFMExport)
            // Last.fm's copy of week 3's compilation tracks, a few seconds
            // earlier and without the album artist, counts instead.
            let week3 = history.filter { Self.start(3)..<Self.start(4) ~= $0.instant && $0.albumArtist != nil }
            let copies = week3.map { Scrobble(instant: $0.instant - 5, artist: $0.artist, album: $0.album, track: $0.track) }
            try await archive.store(copies, of: ana, origin: .sync(of: ana))
            let week = ChartWeek(from: Self.start(3), to: Self.start(4))
            let albums = try #require(try await archive.charts(.album, of: ana, weeks: [week])?.first)
            #expect(albums.entries.map { "\($0.artist) – \($0.name) \($0.plays)" }
                    == ["Blur – \(Self.now50) 2", "Blur – Parklife 2", "Oasis – \(Self.now50) 1", "Pulp – \(Self.now50) 1",
                        "Supergrass – \(Self.now50) 1"])
            #expect(try await archive.forgetCopy(of: ana) == 4)
            try await Self.expectAlbumArtistCharts(archive, history)
            #expect(Set(try await archive.scrobbles(of: ana, from: Self.start(0), to: Self.start(8))) == Set(history))
        }
    }
}
