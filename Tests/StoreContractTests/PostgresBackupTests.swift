import Foundation
import PostgresStore
import Testing
import TestSupport
import VinylogueCore
@testable import Stores

/// docs/DEPLOY.md's PostgreSQL backup: `pg_dump --format=custom` of a
/// database in use, restored with `pg_restore --no-owner` into a new one,
/// which an instance then opens (its migrations find nothing to do) and
/// serves as it was.
@Suite struct PostgresBackupTests {
    @Test func aDumpRestoredIntoANewDatabaseServesTheSameCharts() async throws {
        let server = try TestCluster.url() + "?sslmode=disable"
        let dir = try TemporaryDirectory()
        let dump = dir.url.appendingPathComponent("vinylogue.dump")
        let rj = try Username("RJ")
        let history = DemoHistory(seed: 5, start: 1_600_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: history.firstWeek.from + 30 * LastFMWeekCalendar.weekLength)
        let scrobbles = weeks.flatMap { history.scrobbles(in: $0) }

        @Sendable func state(_ database: PostgresStore.PostgresDatabase) async throws -> (Int, [String], [WeeklyChart]?, [WeeklyChart]?) {
            let archive = PostgresScrobbleStore(database)
            return (try await archive.scrobbleCount(of: rj), try await PostgresListStore(database).users().map(\.name),
                    try await archive.charts(.album, of: rj, weeks: weeks), try await archive.charts(.artist, of: rj, weeks: weeks))
        }
        let before = try await PostgresStore.PostgresDatabase.withTemporaryDatabase(server: server) { url in
            let before = try await PostgresStore.PostgresDatabase.with(url: url) { database in
                _ = try await PostgresScrobbleStore(database).store(scrobbles, of: rj, origin: .lastFMExport)
                _ = try await PostgresListStore(database).addAll([rj, try Username("ybsc")])
                return try await state(database)
            }
            _ = try await TestCluster.run("pg_dump", ["--format=custom", "--file=\(dump.path)", url])
            return before
        }
        #expect(before.0 == scrobbles.count)
        try await PostgresStore.PostgresDatabase.withTemporaryDatabase(server: server) { url in
            _ = try await TestCluster.run("pg_restore", ["--no-owner", "--dbname=\(url)", dump.path])
            try await PostgresStore.PostgresDatabase.with(url: url) { database in
                let after = try await state(database)
                #expect(after.0 == before.0)
                #expect(after.1 == before.1)
                #expect(after.2 == before.2)
                #expect(after.3 == before.3)
                // It takes writes as before: a new listen is kept and charted.
                let listen = Scrobble(instant: weeks[0].from + 1, artist: "Low", album: "HEY WHAT", track: "White Horses")
                #expect(try await PostgresScrobbleStore(database).store([listen], of: rj, origin: .received).inserted == 1)
            }
        }
    }
}
