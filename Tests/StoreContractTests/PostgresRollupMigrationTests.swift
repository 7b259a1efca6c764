import Foundation
import PostgresNIO
import PostgresStore
import Synchronization
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// A PostgreSQL archive stored before weekly charts were kept gets them
/// counted by the migration, equal to a count of its rows, including rows
/// whose damaged instants sit at the far ends of `bigint`.
@Suite struct PostgresRollupMigrationTests {
    static let bob = try! Username("Bob")

    @Test func theMigrationBuildsRollupsForWhatIsArchived() async throws {
        var rng = SplitMix64(seed: 5)
        var instant: Int64 = 1_500_000_000
        var generated: [Scrobble] = (0..<1_200).map { _ in
            instant += Int64(rng.next() % 20_000) + 61
            let a = Int(rng.next() % 3)
            return Scrobble(instant: instant, artist: ["Can", "CAN", "Neu!"][a], album: ["Tago Mago", "tago mago", ""][Int(rng.next() % 3)],
                            track: "T\(rng.next() % 5)", albumMBID: rng.next() % 3 == 0 ? "m\(a)" : nil)
        }
        generated += [Scrobble(instant: .min + 5, artist: "Damaged", album: "Far", track: "Past"),
                      Scrobble(instant: .max - 5, artist: "Damaged", album: "Far", track: "Future")]
        let rows = generated
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                // The archive as it was before the charts' migration.
                try await database.client.query("DROP TABLE weekly_chart")
                try await database.client.query("CREATE TABLE weekly_play (user_id BIGINT)")
                try await database.client.query("DELETE FROM schema_migration WHERE name IN ('weekly-charts', 'weekly-charts-editions-folded')")
                try await database.client.query("INSERT INTO archive_user(name_key, name) VALUES (\(Self.bob.key), \(Self.bob.value))")
                for s in rows {
                    try await database.client.query("""
                        INSERT INTO scrobble (user_id, instant, artist, track, album, album_mbid, source)
                        SELECT id, \(s.instant), \(s.artist), \(s.track), \(s.album), \(s.albumMBID), 0 FROM archive_user
                        """)
                }
                let steps = StepLog()
                try await database.migrate(progress: { steps.append($0) })
                #expect(steps.all.first == MigrationStep(name: "Counting the weekly charts", done: 0, total: 1_202))
                #expect(steps.all.last == MigrationStep(name: "Counting the weekly charts", done: 1_202, total: 1_202))
                let archive = PostgresScrobbleStore(database)
                let source = ArchiveChartSource(store: archive)
                let weeks = try await source.chartList(for: Self.bob).weeks
                #expect(weeks.count > 20)
                for kind in [ChartKind.album, .artist, .track] {
                    for (week, chart) in zip(weeks, try await source.charts(for: Self.bob, kind: kind, weeks: weeks)) {
                        let stored = rows.filter { $0.instant >= week.from && $0.instant < week.to }
                        #expect(chart == ScrobbleTally.chart(kind, user: Self.bob, week: week, scrobbles: stored), "\(kind) chart of \(week)")
                    }
                }
                let albumWeeks = try #require(try await archive.albumWeeks(of: Self.bob, artist: "can", album: "TAGO MAGO"))
                #expect(albumWeeks.count > 20)
                #expect(albumWeeks == ScrobbleTally.albumWeeks(artist: "Can", album: "Tago Mago", in: rows))
                // The damaged rows' weeks are Last.fm's, cut at the ends of Int64.
                for s in rows.suffix(2) {
                    let week = LastFMWeekCalendar.week(containing: s.instant)
                    let chart = try #require(try await archive.charts(.track, of: Self.bob, weeks: [week])?.first)
                    #expect(chart.entries.map(\.name) == [s.track])
                }
            }
        }
    }
}

/// The progress steps a migration reported, from whichever task.
final class StepLog: Sendable {
    private let steps = Mutex<[MigrationStep]>([])
    func append(_ step: MigrationStep) { steps.withLock { $0.append(step) } }
    var all: [MigrationStep] { steps.withLock { $0 } }
}
