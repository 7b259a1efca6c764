import Foundation
import GRDB
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The kept weekly charts always equal a count of the scrobbles themselves:
/// after imports, re-imports, syncs, unchecked writes that meet exact
/// duplicates, and for archives stored before they were kept.
@Suite struct RollupTests {
    static let alice = try! Username("alice")

    /// Random listening over about a year, with case variants and ids.
    static func listening(seed: UInt64, count: Int, start: Int64 = 1_600_000_000) -> [Scrobble] {
        var rng = SplitMix64(seed: seed)
        let artists = ["Portishead", "PORTISHEAD", "Björk", "björk", "Mogwai", "Low"]
        let albums = ["Dummy", "dummy", "Homogenic", "Young Team", "", "Things We Lost"]
        var instant = start
        return (0..<count).map { _ in
            instant += Int64(rng.next() % 20_000) + 61
            let a = Int(rng.next() % 6), b = Int(rng.next() % 6)
            return Scrobble(instant: instant, artist: artists[a], album: albums[b], track: "Track \(rng.next() % 7)",
                            artistMBID: rng.next() % 3 == 0 ? "artist-\(a)" : nil,
                            albumMBID: rng.next() % 4 == 0 ? "album-\(b)-\(rng.next() % 2)" : nil,
                            trackMBID: rng.next() % 5 == 0 ? "track-\(rng.next() % 3)" : nil)
        }
    }

    /// Every week's chart of every kind, from rollups and from the rows.
    static func expectRollupsMatchRows(_ database: ArchiveDatabase, _ user: Username = alice, atLeast: Int = 6,
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let store = SQLiteScrobbleStore(database: database)
        let weeks = try await ArchiveChartSource(store: store).chartList(for: user).weeks
        #expect(weeks.count >= atLeast, sourceLocation: sourceLocation)
        try await database.writer.read { db in
            let id = try #require(try SQLiteScrobbleStore.userID(of: user, in: db))
            for kind in WeeklyRollup.kinds {
                let fromRollups = try WeeklyRollup.charts(kind, user: user, userID: id, weeks: weeks, in: db)
                let fromRows = try SQLiteScrobbleStore.counted(kind, user: user, userID: id, weeks: weeks, in: db)
                for (rollup, rows) in zip(fromRollups, fromRows) where rollup != rows {
                    Issue.record("the \(kind) chart of \(rows.week) from rollups differs from its rows: \(rollup.entries) ≠ \(rows.entries)",
                                 sourceLocation: sourceLocation)
                    return
                }
            }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func rollupsEqualTheRowsAfterImportsAndReimports(seed: UInt64) async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url.appendingPathComponent("data"))
        let store = SQLiteScrobbleStore(database: database)
        let all = Self.listening(seed: seed, count: 2_000)
        var rng = SplitMix64(seed: seed &* 31)
        // Overlapping slices from several sources, in random orders.
        for round in 0..<6 {
            let from = Int(rng.next() % UInt64(all.count)), length = Int(rng.next() % 900) + 1
            let slice = Array(all[from..<min(all.count, from + length)]).shuffled(using: &rng)
            try await store.store(slice, of: Self.alice, origin: round % 2 == 0 ? .lastFMExport : .listenBrainz)
        }
        try await store.store(all, of: Self.alice, origin: .lastFMSync)
        let before = try await Self.keptRows(database)
        #expect(before.count > 50)
        // Storing everything again adds nothing and touches nothing.
        #expect(try await store.store(all.reversed(), of: Self.alice, origin: .spotify).inserted == 0)
        #expect(try await Self.keptRows(database) == before)
        try await Self.expectRollupsMatchRows(database)
        #expect(try await ArchiveChartSource(store: store).chartList(for: Self.alice).weeks.isEmpty == false)
    }

    static func keptRows(_ database: ArchiveDatabase) async throws -> [Row] {
        try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM weekly_chart ORDER BY user_id, week, kind, rank")
        }
    }

    /// An unchecked write (the demo's) that meets exact keys already
    /// stored cannot tell which rows were new: its weeks are counted again.
    /// Listens counted into a week's kept rows, wherever they fall among
    /// the week's others (an import into weeks that hold listens), give
    /// exactly a whole count whenever `adding` says it can; and it can
    /// whenever no id or spelling stands in the way.
    @Test(arguments: [UInt64(11), 12, 13, 14])
    func listensAddedAnywhereInAWeekGiveAWholeCountWheneverTheyAreCountedIn(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let week: Int64 = 1_600_000_000
        let albums = ["Dummy", "Homogenic", "Young Team", ""]
        var countedIn = 0
        for round in 0..<300 {
            let withIDs = round % 2 == 0
            func scrobble() -> Scrobble {
                let b = Int(rng.next() % 4)
                return Scrobble(instant: week + Int64(rng.next() % 600_000), artist: ["Portishead", "Mogwai", "Low"][b % 3], album: albums[b],
                                track: "Track \(rng.next() % 50)",
                                artistMBID: withIDs && rng.next() % 3 == 0 ? "artist-\(rng.next() % 2)" : nil,
                                albumMBID: withIDs && rng.next() % 3 == 0 ? "album-\(rng.next() % 2)" : nil)
            }
            let kept = (0..<Int(rng.next() % 12)).map { _ in scrobble() }
            let added = (0..<Int(rng.next() % 8) + 1).map { _ in scrobble() }
            let afterAll = added.allSatisfy { a in kept.allSatisfy { WeeklyRollup.canonicalOrder($0, a) } }
            for kind in [ChartKind.album, .artist] {
                let entries = WeeklyRollup.rows(week: week, scrobbles: kept).filter { $0.kind == kind }.map(\.entry)
                let whole = WeeklyRollup.rows(week: week, scrobbles: kept + added).filter { $0.kind == kind }.map(\.entry)
                guard let counted = WeeklyRollup.adding(added, to: entries, kind: kind, afterAll: afterAll) else {
                    #expect(withIDs, "without ids and with one spelling per group, listens are always counted in")
                    continue
                }
                countedIn += 1
                #expect(counted == whole, "round \(round), \(kind), after all: \(afterAll)")
            }
        }
        #expect(countedIn > 300)
    }

    @Test func anUncheckedWriteMeetingStoredKeysCountsItsWeeksAgain() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url.appendingPathComponent("data"))
        let store = SQLiteScrobbleStore(database: database)
        let all = Self.listening(seed: 9, count: 1_500)
        try await store.store(Array(all[..<700]), of: Self.alice, origin: .lastFMExport)
        // Half of these keys are stored already.
        let added = try await store.storeGenerated(Array(all[350..<1_500]), of: Self.alice, through: 0, seed: 1, firstWeek: 0)
        #expect(added == 800)
        try await Self.expectRollupsMatchRows(database)
    }

    /// An archive whose rollups were plays per spelling (sessions 6 and 7,
    /// migrations v1 and v2) gets its weekly charts counted from its
    /// scrobbles when it is opened, and the old table goes.
    @Test func rollupsOfPlaysPerSpellingBecomeKeptCharts() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("old.sqlite").path
        let scrobbles = Self.listening(seed: 6, count: 1_500)
        do {
            let queue = try DatabaseQueue(path: path)
            try ArchiveDatabase.migrator(progress: nil).migrate(queue, upTo: "weekly rollups v2: album keys")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO archive_user (id, name_key, name) VALUES (1, 'alice', 'alice')")
                for s in scrobbles {
                    try db.execute(sql: """
                        INSERT INTO scrobble (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source)
                        VALUES (1, ?, ?, ?, ?, ?, ?, ?, 2)
                        """, arguments: [s.instant, s.artist, s.track, s.album, s.artistMBID, s.albumMBID, s.trackMBID])
                }
                // A row as those versions kept them.
                try db.execute(sql: "INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant) VALUES (1, 0, 2, 'x', 'y', 9, NULL, 0)")
            }
        }
        try FileManager.default.moveItem(atPath: path, toPath: dir.url.appendingPathComponent(ArchiveDatabase.fileName).path)
        let database = try ArchiveDatabase(directory: dir.url)
        let oldTable = try await database.writer.read { db in try db.tableExists("weekly_play") }
        #expect(!oldTable)
        try await Self.expectRollupsMatchRows(database, Self.alice)
        let store = SQLiteScrobbleStore(database: database)
        let weeks = try #require(try await store.albumWeeks(of: Self.alice, artist: "portishead", album: "DUMMY"))
        let expected = ScrobbleTally.albumWeeks(artist: "Portishead", album: "Dummy", in: scrobbles)
        #expect(expected.count > 10)
        #expect(weeks == expected)
    }

    /// An archive whose charts were counted by spelling (before editions
    /// folded) is counted again when it is opened: the remaster's plays
    /// join the album's, and every chart equals a count of its rows.
    @Test func chartsCountedBySpellingAreCountedAgainWithEditionsFolded() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("old.sqlite").path
        let then: Int64 = 1_370_000_000, now: Int64 = 1_780_000_000
        do {
            let queue = try DatabaseQueue(path: path)
            try ArchiveDatabase.migrator(progress: nil).migrate(queue, upTo: "digests in the job queue")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO archive_user (id, name_key, name) VALUES (1, 'alice', 'alice')")
                for (n, (instant, album)) in [(then, "Abbey Road"), (then + 60, "Abbey Road"), (now, "Abbey Road (Remastered)"),
                                              (now + 60, "Abbey Road - 2019 Mix"), (now + 120, "Abbey Road (Remastered)")].enumerated() {
                    try db.execute(sql: """
                        INSERT INTO scrobble (user_id, instant, artist, track, album, source) VALUES (1, ?, 'The Beatles', ?, ?, 2)
                        """, arguments: [instant, "Track \(n)", album])
                }
                // The rows as that version counted them: a row per spelling.
                let week = LastFMWeekCalendar.week(containing: now).from
                try db.execute(sql: """
                    INSERT INTO weekly_chart (user_id, week, kind, rank, artist, name, plays, mbid, album_key) VALUES
                    (1, ?, 0, 1, 'The Beatles', 'Abbey Road (Remastered)', 2, NULL, 'the beatles' || char(31) || 'abbey road (remastered)'),
                    (1, ?, 0, 2, 'The Beatles', 'Abbey Road - 2019 Mix', 1, NULL, 'the beatles' || char(31) || 'abbey road - 2019 mix')
                    """, arguments: [week, week])
            }
        }
        try FileManager.default.moveItem(atPath: path, toPath: dir.url.appendingPathComponent(ArchiveDatabase.fileName).path)
        let database = try ArchiveDatabase(directory: dir.url)
        try await Self.expectRollupsMatchRows(database, Self.alice, atLeast: 2)
        let weeks = try #require(try await SQLiteScrobbleStore(database: database).albumWeeks(of: Self.alice, artist: "The Beatles", album: "Abbey Road"))
        #expect(weeks.map(\.plays) == [2, 3])
        #expect(weeks.map(\.name) == ["Abbey Road", "Abbey Road (Remastered)"])
    }

    /// An archive stored before rollups existed gets them when it is opened.
    @Test func theMigrationBuildsRollupsForAnExistingArchive() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("old.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try ArchiveDatabase.migrator(progress: nil).migrate(queue, upTo: "accounts-and-sessions")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO archive_user (id, name_key, name) VALUES (1, 'alice', 'alice'), (2, 'bob', 'bob')")
                for (userID, seed) in [(Int64(1), UInt64(4)), (2, 5)] {
                    for s in Self.listening(seed: seed, count: 1_200) {
                        try db.execute(sql: """
                            INSERT INTO scrobble (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 2)
                            """, arguments: [userID, s.instant, s.artist, s.track, s.album, s.artistMBID, s.albumMBID, s.trackMBID])
                    }
                }
            }
        }
        try FileManager.default.moveItem(atPath: path, toPath: dir.url.appendingPathComponent(ArchiveDatabase.fileName).path)
        let steps = StepLog()
        let database = try ArchiveDatabase(directory: dir.url, progress: { steps.append($0) })
        try await Self.expectRollupsMatchRows(database, Self.alice)
        try await Self.expectRollupsMatchRows(database, Username("bob"))
        // Its progress: from none to all 2,400 scrobbles, a step per percent at most.
        let seen = steps.all
        #expect(seen.first == MigrationStep(name: "Counting the weekly charts", done: 0, total: 2_400))
        #expect(seen.last == MigrationStep(name: "Counting the weekly charts", done: 2_400, total: 2_400))
        #expect(seen.count > 10 && seen.count <= 101)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.done < $1.done })
    }

    /// Reopening an archive runs no migration again, so reports nothing.
    @Test func anUpToDateArchiveReportsNoProgress() async throws {
        let dir = try TemporaryDirectory()
        _ = try ArchiveDatabase(directory: dir.url)
        let steps = StepLog()
        _ = try ArchiveDatabase(directory: dir.url, progress: { steps.append($0) })
        #expect(steps.all.isEmpty)
    }
}

/// The progress steps a migration reported, from whichever thread.
final class StepLog: Sendable {
    private let steps = Mutex<[MigrationStep]>([])
    func append(_ step: MigrationStep) { steps.withLock { $0.append(step) } }
    var all: [MigrationStep] { steps.withLock { $0 } }
}
