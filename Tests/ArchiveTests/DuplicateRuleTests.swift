import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// The archive's duplicate rule: same user, same artist and track without
/// regard to case, instants less than 60 seconds apart.
@Suite struct DuplicateRuleTests {
    @Test func theWindowAndTheNames() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let t: Int64 = 1_580_495_100
        try await store.store([Scrobble(instant: t, artist: "Björk", album: "Homogenic", track: "Jóga")], of: alice, origin: .lastFMExport)
        let counts = try await store.store([
            Scrobble(instant: t + 59, artist: "BJÖRK", album: "", track: "JÓGA"),     // same listen, other source
            Scrobble(instant: t - 59, artist: "björk", album: "Homogenic", track: "jóga"),
            Scrobble(instant: t + 60, artist: "Björk", album: "Homogenic", track: "Jóga"),  // a minute later: a second play
            Scrobble(instant: t + 10, artist: "Björk", album: "Homogenic", track: "Hunter"),
            Scrobble(instant: t + 10, artist: "Portishead", album: "Dummy", track: "Jóga"),
        ], of: alice, origin: .listenBrainz)
        #expect(counts == InsertCounts(inserted: 3, duplicates: 2))
        // Within one batch too: the second of two near plays is a duplicate.
        let batch = try await store.store([Scrobble(instant: t + 5000, artist: "A", album: "", track: "B"),
                                      Scrobble(instant: t + 5030, artist: "a", album: "", track: "b")], of: alice, origin: .spotify)
        #expect(batch == InsertCounts(inserted: 1, duplicates: 1))
        // Other users are never compared.
        let bob = try Username("bob")
        #expect(try await store.store([Scrobble(instant: t, artist: "Björk", album: "", track: "Jóga")], of: bob, origin: .spotify).inserted == 1)
    }

    /// The same plays kept by Last.fm (CSV) and by ListenBrainz (a ZIP),
    /// with ListenBrainz's copies a few seconds off and in other casing,
    /// count once; the plays only one of them has are added.
    @Test func overlappingLastFMAndListenBrainzExportsCountEachPlayOnce() async throws {
        let dir = try TemporaryDirectory()
        let start: Int64 = 1_580_000_000
        let plays = (0..<300).map { i in
            Scrobble(instant: start + Int64(i) * 240, artist: "Artist \(i % 9)", album: "Album \(i % 13)", track: "Track \(i % 40)")
        }
        // Last.fm has plays 0..<200, ListenBrainz 100..<300.
        let csv = try dir.file("lastfm.csv", ([csvHeader] + plays[0..<200].reversed().map(csvLine)).joined(separator: "\n"))
        let listens = plays[100..<300].map { s in
            listenLine(s.instant + Int64(s.instant % 7), s.artist.uppercased(), s.track.lowercased(), album: s.album)
        }
        let zip = dir.url.appendingPathComponent("listenbrainz.zip")
        try makeZIP(at: zip, [("listens/2020/1.jsonl", listens.joined(separator: "\n"))])

        let store = try dir.store()
        let importer = ScrobbleImporter(store: store, clock: testClock, batchSize: 64)
        let fromLastFM = try importer.importFile(at: csv, for: alice)
        let fromListenBrainz = try importer.importFile(at: zip.path, for: alice)
        #expect(fromLastFM.imported == 200)
        #expect(fromListenBrainz.imported == 100 && fromListenBrainz.duplicates == 100)
        #expect(try await store.scrobbleCount(of: alice) == 300)

        // And in the other order, into a fresh archive.
        let other = try dir.store("other")
        let importer2 = ScrobbleImporter(store: other, clock: testClock, batchSize: 64)
        #expect(try importer2.importFile(at: zip.path, for: alice).imported == 200)
        #expect(try importer2.importFile(at: csv, for: alice).imported == 100)
        #expect(try await other.scrobbleCount(of: alice) == 300)
    }
}
