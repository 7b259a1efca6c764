import Foundation
import GRDB
import Testing
import VinylogueCore
@testable import Archive

@Suite struct StoreTests {
    @Test func duplicatesInsideOneBatchAndAcrossBatchesAreCountedNotStored() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        // A minute apart: closer plays of one track are one listen (DuplicateRuleTests).
        let unique = (0..<150).map { Scrobble(instant: 1_600_000_000 + Int64($0) * 60, artist: "A", album: "B", track: "T\($0 % 7)") }
        // Every tenth one repeated, some within the same 64-row statement.
        let withRepeats = unique + unique.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        let first = try store.insert(withRepeats.shuffled(), for: alice, origin: .lastFMExport)
        #expect(first == InsertCounts(inserted: 150, duplicates: 15))
        let again = try store.insert(unique, for: alice, origin: .lastFMSync)
        #expect(again == InsertCounts(inserted: 0, duplicates: 150))
        // Same instant and artist/track but another album is still the same play.
        let sameKey = Scrobble(instant: 1_600_000_000, artist: "A", album: "Other", track: "T0")
        #expect(try store.insert([sameKey], for: alice, origin: .spotify) == InsertCounts(inserted: 0, duplicates: 1))
        #expect(try store.count(for: alice) == 150)
        // Users are separate; the name is matched case-insensitively.
        let bob = try Username("Bob")
        #expect(try store.insert(unique.prefix(10), for: bob, origin: .demo).inserted == 10)
        #expect(try store.count(for: Username("BOB")) == 10)
        #expect(try await store.span(for: alice) == 1_600_000_000...(1_600_000_000 + 149 * 60))
        let origins = try await store.database.writer.read { db in
            try ArchivedScrobble.filter(sql: "user_id = 1").fetchAll(db).map(\.origin)
        }
        #expect(Set(origins) == [.lastFMExport])
    }
}
