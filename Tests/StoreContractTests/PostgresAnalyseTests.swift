import Foundation
import PostgresNIO
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// A large import leaves PostgreSQL's statistics of the archive's tables
/// up to date, so the first pages after it are planned on what is there
/// (a new database's tables otherwise look empty until autovacuum runs).
@Suite struct PostgresAnalyseTests {
    /// `reltuples` counts nothing until a table with rows is analysed;
    /// autovacuum is off for both tables here, so only the import can
    /// have done it.
    static func analysed(_ database: PostgresStore.PostgresDatabase) async throws -> [String: Bool] {
        var seen: [String: Bool] = [:]
        let rows = try await database.client.query("""
            SELECT relname::text, reltuples > 0 FROM pg_class WHERE relname IN ('scrobble', 'weekly_chart')
            """)
        for try await (name, analysed) in rows.decode((String, Bool).self) { seen[name] = analysed }
        return seen
    }

    static func importCSV(_ lines: Int, user: String, into store: PostgresScrobbleStore, start: Int64) async throws -> ImportSummary {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-analyse-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: file) }
        var text = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid\n"
        for n in 0..<lines {
            text += "\(start + Int64(n) * 600),\"01 Jan 2020, 00:00\",Artist \(n % 40),,Album \(n % 90),,Track \(n % 13),\n"
        }
        try text.write(to: file, atomically: true, encoding: .utf8)
        let importer = ScrobbleImporter(store: store, clock: .fixed(Date(timeIntervalSince1970: 1_700_000_000)))
        let path = file.path, name = try Username(user)
        return try await DedicatedThread.run(named: "vinylogue.test-import") { try importer.importFile(at: path, for: name) }
    }

    @Test func aLargeImportAnalysesTheArchivesTables() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresStore.PostgresDatabase.with(url: url) { database in
                for table in ["scrobble", "weekly_chart"] {
                    try await database.client.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) SET (autovacuum_enabled = false)"))
                }
                let store = PostgresScrobbleStore(database)
                // Below the threshold: left to autovacuum.
                let small = try await Self.importCSV(50, user: "small", into: store, start: 1_500_000_000)
                #expect(small.imported == 50)
                #expect(try await Self.analysed(database) == ["scrobble": false, "weekly_chart": false])
                let large = try await Self.importCSV(PostgresScrobbleStore.analyseAfter, user: "large", into: store, start: 1_500_000_000)
                #expect(large.imported == PostgresScrobbleStore.analyseAfter)
                #expect(try await Self.analysed(database) == ["scrobble": true, "weekly_chart": true])
            }
        }
    }
}
