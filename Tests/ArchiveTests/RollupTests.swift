import Foundation
import GRDB
import Testing
import VinylogueCore
@testable import Archive

/// The weekly rollups always equal a count of the scrobbles themselves:
/// after imports, re-imports, syncs, unchecked writes that meet exact
/// duplicates, and for archives stored before rollups existed.
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
    static func expectRollupsMatchRows(_ database: ArchiveDatabase, _ user: Username = alice,
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let store = SQLiteScrobbleStore(database: database)
        let weeks = try await ArchiveChartSource(store: store).chartList(for: user).weeks
        #expect(weeks.count > 5, sourceLocation: sourceLocation)
        try await database.writer.read { db in
            let id = try #require(try SQLiteScrobbleStore.userID(of: user, in: db))
            for kind in WeeklyRollup.kinds {
                let fromRollups = try WeeklyRollup.charts(kind, user: user, userID: id, weeks: weeks, in: db)
                let fromRows = try ArchiveChartSource.charts(kind, user: user, userID: id, weeks: weeks, in: db)
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
        let before = try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT sum(plays) FROM weekly_play") }
        // Storing everything again adds nothing and touches nothing.
        #expect(try await store.store(all.reversed(), of: Self.alice, origin: .spotify).inserted == 0)
        #expect(try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT sum(plays) FROM weekly_play") } == before)
        try await Self.expectRollupsMatchRows(database)
        #expect(try await ArchiveChartSource(store: store).chartList(for: Self.alice).weeks.isEmpty == false)
    }

    /// An unchecked write (the demo's) that meets exact keys already
    /// stored cannot tell which rows were new: its weeks are counted again.
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

    /// An archive whose rollups were counted under v1 (session 6: with
    /// track rows, without album keys) is brought to v2 when it is opened:
    /// track rows gone, album rows keyed, charts and album weeks right.
    @Test func rollupsCountedUnderV1GetAlbumKeysAndLoseTrackRows() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("old.sqlite").path
        let scrobbles = Self.listening(seed: 6, count: 1_500)
        do {
            let queue = try DatabaseQueue(path: path)
            try ArchiveDatabase.migrator.migrate(queue, upTo: "weekly rollups v1")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO archive_user (id, name_key, name) VALUES (1, 'alice', 'alice')")
                var rollup = WeeklyRollup()
                for s in scrobbles {
                    try db.execute(sql: """
                        INSERT INTO scrobble (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source)
                        VALUES (1, ?, ?, ?, ?, ?, ?, ?, 2)
                        """, arguments: [s.instant, s.artist, s.track, s.album, s.artistMBID, s.albumMBID, s.trackMBID])
                    rollup.add(s)
                }
                for (key, plays) in rollup.entries {
                    try db.execute(sql: """
                        INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [key.week, WeeklyRollup.kindCode(key.kind), key.artist, key.name, plays.count, plays.mbid, plays.mbidInstant])
                }
                // Session 6's track rows, which v2 no longer keeps.
                try db.execute(sql: "INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant) VALUES (1, 0, 2, 'x', 'y', 9, NULL, 0)")
            }
        }
        try FileManager.default.moveItem(atPath: path, toPath: dir.url.appendingPathComponent(ArchiveDatabase.fileName).path)
        let database = try ArchiveDatabase(directory: dir.url)
        let (trackRows, unkeyed) = try await database.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM weekly_play WHERE kind = 2"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM weekly_play WHERE kind = 0 AND album_key IS NULL"))
        }
        #expect(trackRows == 0)
        #expect(unkeyed == 0)
        try await Self.expectRollupsMatchRows(database, Self.alice)
        let store = SQLiteScrobbleStore(database: database)
        let weeks = try #require(try await store.albumWeeks(of: Self.alice, artist: "portishead", album: "DUMMY"))
        let expected = Dictionary(grouping: scrobbles.filter { $0.artist.lowercased() == "portishead" && $0.album.lowercased() == "dummy" }) {
            LastFMWeekCalendar.week(containing: $0.instant)
        }.map { WeekPlays(week: $0.key, plays: $0.value.count) }.sorted { $0.week.from < $1.week.from }
        #expect(!expected.isEmpty)
        #expect(weeks == expected)
    }

    /// An archive stored before rollups existed gets them when it is opened.
    @Test func theMigrationBuildsRollupsForAnExistingArchive() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("old.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try ArchiveDatabase.migrator.migrate(queue, upTo: "accounts-and-sessions")
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
        let database = try ArchiveDatabase(directory: dir.url)
        try await Self.expectRollupsMatchRows(database, Self.alice)
        try await Self.expectRollupsMatchRows(database, Username("bob"))
    }
}
