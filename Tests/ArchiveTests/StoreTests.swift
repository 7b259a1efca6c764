import Foundation
import GRDB
import GRDBSQLite
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

@Suite struct StoreTests {
    /// The writer connection keeps its inserts compiled once for everyone:
    /// the user id is bound, not written into the SQL (it was, and each
    /// person who sent listens added statements to the cache for good).
    @Test func insertsForManyPeopleShareTheirCompiledStatements() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        for n in 0..<20 {
            let user = try Username("listener\(n)")
            let listens = (0..<70).map { i in Scrobble(instant: 1_600_000_000 + Int64(i) * 300, artist: "Low", album: "Secret Name", track: "T\(i % 9)") }
            _ = try await store.store(listens, of: user, origin: .received)
            _ = try await store.store([Scrobble(instant: 1_700_000_000, artist: "Low", album: "", track: "One")], of: user, origin: .received)
        }
        let compiled = try await store.database.writer.write { db -> [String] in
            var found: [String] = []
            var statement = sqlite3_next_stmt(db.sqliteConnection, nil)
            while let current = statement {
                if let sql = sqlite3_sql(current).map({ String(cString: $0) }), sql.hasPrefix("INSERT") { found.append(String(sql.prefix(40))) }
                statement = sqlite3_next_stmt(db.sqliteConnection, current)
            }
            return found
        }
        // One scrobble insert and one chart insert of each size (a full group,
        // a single row); one for set-aside listens (the 70 repeat tracks).
        #expect(compiled.filter { $0.contains("INTO scrobble (") }.count == 2, "\(compiled)")
        #expect(compiled.filter { $0.contains("INTO scrobble_echo") }.count <= 1, "\(compiled)")
        #expect(compiled.filter { $0.contains("INTO weekly_chart") }.count <= 2, "\(compiled)")
    }

    @Test func duplicatesInsideOneBatchAndAcrossBatchesAreCountedNotStored() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        // A minute apart: closer plays of one track are one listen (DuplicateRuleTests).
        let unique = (0..<150).map { Scrobble(instant: 1_600_000_000 + Int64($0) * 60, artist: "A", album: "B", track: "T\($0 % 7)") }
        // Every tenth one repeated, some within the same 64-row statement.
        let withRepeats = unique + unique.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        let first = try await store.store(withRepeats.shuffled(), of: alice, origin: .lastFMExport)
        #expect(first == InsertCounts(inserted: 150, duplicates: 15))
        let again = try await store.store(unique, of: alice, origin: .lastFMSync)
        #expect(again == InsertCounts(inserted: 0, duplicates: 150))
        // Same instant and artist/track but another album is still the same play.
        let sameKey = Scrobble(instant: 1_600_000_000, artist: "A", album: "Other", track: "T0")
        #expect(try await store.store([sameKey], of: alice, origin: .spotify) == InsertCounts(inserted: 0, duplicates: 1))
        #expect(try await store.scrobbleCount(of: alice) == 150)
        // Users are separate; the name is matched case-insensitively.
        let bob = try Username("Bob")
        #expect(try await store.store(Array(unique.prefix(10)), of: bob, origin: .demo).inserted == 10)
        #expect(try await store.scrobbleCount(of: Username("BOB")) == 10)
        #expect(try await store.span(for: alice) == 1_600_000_000...(1_600_000_000 + 149 * 60))
        let origins = try await store.database.writer.read { db in
            try ArchivedScrobble.filter(sql: "user_id = 1").fetchAll(db).map(\.origin)
        }
        #expect(Set(origins) == [.lastFMExport])
    }
}
