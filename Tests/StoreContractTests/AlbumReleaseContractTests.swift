import Foundation
import GRDB
import PostgresNIO
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import Sync
@testable import PostgresStore
@testable import SQLiteStore

/// Albums tied by MusicBrainz release on both stores: a listen whose
/// release MBID another spelling's listens carry joins the two albums in
/// every chart (the weeks it touches counted again by the album job);
/// different releases never split what the rule joins; keep apart wins;
/// forgetting the listens that tied them unties them; the ties go with the
/// account and are derived on upgrade.
@Suite struct AlbumReleaseContractTests {
    typealias Backend = StoreContractTests.Backend
    static let ana = try! Username("ana")
    static let okComputer = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29"
    static let tidewater = "6b1e5bb2-3f5f-4a8e-9ac2-1a9a3c0f1d11"
    static let tidewaterDeluxe = "9a7e5bb2-3f5f-4a8e-9ac2-1a9a3c0f1d22"

    static func start(_ week: Int) -> Int64 { 1_700_000_000 + Int64(week) * 604_800 }

    /// 20 weeks: "OK Computer" (with its release id) on even weeks,
    /// "OK Computer OKNOTOK 1997 2017" (without one) on odd weeks; every
    /// week Tidewater and its deluxe edition, each with its own release.
    static func history() -> [Scrobble] {
        var scrobbles: [Scrobble] = []
        for week in 0..<20 {
            func play(_ artist: String, _ album: String, _ count: Int, at offset: Int64, mbid: String?) {
                for n in 0..<count {
                    scrobbles.append(Scrobble(instant: start(week) + offset + Int64(n) * 300, artist: artist, album: album,
                                              track: "\(album) \(n)", albumMBID: mbid))
                }
            }
            play("Vetiver", "Tidewater", 3, at: 0, mbid: tidewater)
            play("Vetiver", "Tidewater (Deluxe Edition)", 2, at: 3_600, mbid: tidewaterDeluxe)
            if week % 2 == 0 {
                play("Radiohead", "OK Computer", 2, at: 7_200, mbid: okComputer)
            } else {
                play("Radiohead", "OK Computer OKNOTOK 1997 2017", 2, at: 7_200, mbid: nil)
            }
        }
        return scrobbles
    }

    /// The listen that ties OKNOTOK to OK Computer: in week 20, with the release id.
    static let tying = Scrobble(instant: start(20) + 100, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Airbag",
                                albumMBID: okComputer.uppercased())

    static func weeks(_ archive: any ScrobbleArchive, _ album: String) async throws -> Int {
        try await archive.albumWeeks(of: ana, artist: "Radiohead", album: album)?.count ?? 0
    }

    @Test(arguments: Backend.allCases)
    func aSharedReleaseJoinsTwoSpellingsEverywhereOnceCounted(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            try await archive.store(Self.history(), of: ana, origin: .lastFMExport)
            #expect(try await Self.weeks(archive, "OK Computer") == 10)
            #expect(try await Self.weeks(archive, "OK Computer OKNOTOK 1997 2017") == 10)
            #expect(try await archive.albumFolding(of: ana).sameRelease.isEmpty)
            // Different releases never split what the rule joins.
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater")?.map(\.plays) == Array(repeating: 5, count: 20))
            #expect(try await AlbumChoiceContractTests.countQueued(stores, ana) == 0, "no tie changed a group: nothing queued")

            // One listen carrying the release id ties them: its own week
            // counts in the group at once, the others once the job ran.
            try await archive.store([Self.tying], of: ana, origin: .sync(of: ana))
            let folding = try await archive.albumFolding(of: ana)
            #expect(folding.sameRelease.count == 1)
            #expect(try await Self.weeks(archive, "OK Computer") == 11)
            #expect(try await AlbumChoiceContractTests.countQueued(stores, ana) == 2, "10 weeks to count: one slice and the one that finds none")
            #expect(try await Self.weeks(archive, "OK Computer") == 21)
            #expect(try await Self.weeks(archive, "OK Computer OKNOTOK 1997 2017") == 21, "either spelling finds the album")
            let spellings = try #require(try await archive.albumSpellings(of: ana, artist: "Radiohead", album: "OK Computer"))
            #expect(spellings.spellings.map(\.album) == ["OK Computer OKNOTOK 1997 2017", "OK Computer"])
            #expect(spellings.spellings.map(\.plays) == [21, 20])
            try await AlbumChoiceContractTests.expectCharts(archive, Self.history() + [Self.tying], weeks: 21)

            // Keeping the reissue apart wins over its release.
            #expect(try await archive.changeAlbums(.keepApart(artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017"), of: ana,
                                                   at: AlbumChoiceContractTests.now))
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            #expect(try await Self.weeks(archive, "OK Computer") == 10)
            #expect(try await Self.weeks(archive, "OK Computer OKNOTOK 1997 2017") == 11)
            #expect(try await archive.changeAlbums(.undo(.apart, key: AlbumFolding.spellingKey(artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017")),
                                                   of: ana, at: AlbumChoiceContractTests.now))
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            #expect(try await Self.weeks(archive, "OK Computer") == 21)

            // Forgetting the copied listen that tied them unties them.
            #expect(try await archive.forgetCopy(of: ana) == 1)
            #expect(try await archive.albumFolding(of: ana).sameRelease.isEmpty)
            #expect(try await AlbumChoiceContractTests.countQueued(stores, ana) == 2)
            #expect(try await Self.weeks(archive, "OK Computer") == 10)
            try await AlbumChoiceContractTests.expectCharts(archive, Self.history(), weeks: 20)
        }
    }

    @Test(arguments: Backend.allCases)
    func tiesArriveTogetherInOneWriteAndCountAtOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            let history = Self.history().map { s in
                s.album.hasPrefix("OK Computer OKNOTOK")
                    ? Scrobble(instant: s.instant, artist: s.artist, album: s.album, track: s.track, albumMBID: Self.okComputer) : s
            }
            try await archive.store(history, of: ana, origin: .lastFMExport)
            #expect(try await Self.weeks(archive, "OK Computer") == 20, "counted in its group as it was stored")
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            try await AlbumChoiceContractTests.expectCharts(archive, history, weeks: 20)
            // Turned off, every spelling is its own again; on, tied again.
            #expect(try await archive.chooseAlbumFolding(.asSpelled, of: ana, at: AlbumChoiceContractTests.now))
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            #expect(try await Self.weeks(archive, "OK Computer") == 10)
            #expect(try await archive.chooseAlbumFolding(.editions, of: ana, at: AlbumChoiceContractTests.now))
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            #expect(try await Self.weeks(archive, "OK Computer") == 20)
        }
    }

    /// A week that holds both spellings, and a listen that ties them: the
    /// week is one album as soon as the listen is stored, not two rows
    /// until the job runs.
    @Test(arguments: Backend.allCases)
    func aWeekWithBothSpellingsIsOneAlbumAsSoonAsTheyAreTied(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana, start = Self.start(0)
            var week = (0..<3).map { n in
                Scrobble(instant: start + Int64(n) * 300, artist: "Radiohead", album: "OK Computer", track: "Airbag \(n)", albumMBID: Self.okComputer)
            }
            week += (0..<2).map { n in
                Scrobble(instant: start + 3_600 + Int64(n) * 300, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Lucky \(n)")
            }
            try await archive.store(week, of: ana, origin: .lastFMExport)
            let tying = Scrobble(instant: start + 7_200, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Lucky",
                                 albumMBID: Self.okComputer)
            try await archive.store([tying], of: ana, origin: .listenBrainz)
            let chartWeek = LastFMWeekCalendar.week(containing: start)
            let chart = try #require(try await archive.charts(.album, of: ana, weeks: [chartWeek])?.first)
            #expect(chart.entries.map(\.plays) == [6], "\(chart.entries)")
        }
    }

    /// A release group ties as a release does: the translated title and
    /// the original name different releases of one release group, and
    /// stay one album when the person's ties are derived again from what is
    /// stored.
    @Test(arguments: Backend.allCases)
    func aSharedReleaseGroupJoinsSpellingsOfDifferentReleases(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            let group = "2d3f7c1e-44b0-4b2f-9a7e-0d1c6a5b4e33"
            var history: [Scrobble] = []
            for week in 0..<6 {
                let (album, release) = week % 2 == 0 ? ("Amélie", Self.tidewater) : ("Le Fabuleux Destin d'Amélie Poulain", Self.tidewaterDeluxe)
                for n in 0..<3 {
                    history.append(Scrobble(instant: Self.start(week) + Int64(n) * 300, artist: "Yann Tiersen", album: album, track: "T\(n)",
                                            albumMBID: release, releaseGroupMBID: week == 5 ? nil : group))
                }
            }
            try await archive.store(history, of: ana, origin: .listenBrainz)
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            #expect(try await archive.albumWeeks(of: ana, artist: "Yann Tiersen", album: "Amélie")?.count == 6,
                    "week 5 names only its release, which week 1 and 3 tie to the group")
            try await AlbumChoiceContractTests.expectCharts(archive, history, weeks: 6)
            #expect(Set(try await archive.scrobbles(of: ana, from: 0, to: .max)) == Set(history), "the listens keep their release group")
            // Derived again from what is stored (a forgotten copy does this): the same.
            try await archive.store([Scrobble(instant: Self.start(6), artist: "Yann Tiersen", album: "Amélie", track: "Copied")],
                                    of: ana, origin: .sync(of: ana))
            #expect(try await archive.forgetCopy(of: ana) == 1)
            #expect(try await archive.albumFolding(of: ana).sameRelease.count == 1)
            #expect(try await archive.albumWeeks(of: ana, artist: "Yann Tiersen", album: "Le Fabuleux Destin d'Amélie Poulain")?.count == 6)
        }
    }

    /// Compilations played as their track artists, their listens arriving
    /// in batches in any order: the groups a write regroups one by one are
    /// the groups all the ties give (derived again when a copy is
    /// forgotten), and the charts count them.
    @Test(arguments: Backend.allCases)
    func groupsMadeWriteByWriteAreTheGroupsOfEveryTie(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            var rng = SplitMix64(seed: 25)
            var history: [Scrobble] = []
            for compilation in 0..<6 {
                let release = String(format: "%08x-1111-4000-8000-000000000000", compilation)
                for n in 0..<24 {
                    history.append(Scrobble(instant: Self.start(n % 8) + Int64(compilation * 24 + n) * 60, artist: "Artist \((n * 7 + compilation) % 11)",
                                            album: "Hits \(compilation % 4)", track: "Track \(n)", albumMBID: release))
                }
            }
            history.shuffle(using: &rng)
            for start in stride(from: 0, to: history.count, by: 25) {
                try await archive.store(Array(history[start..<min(start + 25, history.count)]), of: ana, origin: .lastFMExport)
            }
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            let madeByWrites = try await archive.albumFolding(of: ana).sameRelease
            #expect(!madeByWrites.isEmpty)
            try await AlbumChoiceContractTests.expectCharts(archive, history, weeks: 8)
            try await archive.store([Scrobble(instant: Self.start(9), artist: "Copied", album: "Copied", track: "Copied")], of: ana,
                                    origin: .sync(of: ana))
            #expect(try await archive.forgetCopy(of: ana) == 1)
            #expect(try await archive.albumFolding(of: ana).sameRelease == madeByWrites)
        }
    }

    /// An archive stored before ties were kept gets them on upgrade, and
    /// its tied albums' weeks counted again by the album job.
    @Test(arguments: Backend.allCases)
    func anUpgradeDerivesTheTiesAndCountsTheirWeeks(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            try await archive.store(Self.history() + [Self.tying], of: ana, origin: .lastFMExport)
            _ = try await AlbumChoiceContractTests.countQueued(stores, ana)
            if let sqlite = stores.sqlite {
                try await sqlite.writer.write { db in
                    // As the old release counted them: without the tie.
                    try db.execute(sql: "DELETE FROM album_release; DELETE FROM album_release_group")
                    try WeeklyRollup.recount(Self.everyWeek(), userID: try #require(try SQLiteScrobbleStore.userID(of: ana, in: db)), in: db)
                }
                #expect(try await Self.weeks(archive, "OK Computer") == 10)
                try await sqlite.writer.write { db in
                    try db.execute(sql: """
                        DROP TABLE album_release; DROP TABLE album_release_group;
                        DELETE FROM grdb_migrations WHERE identifier = 'albums tied by MusicBrainz release';
                        """)
                }
                try ArchiveDatabase.migrator(progress: nil).migrate(sqlite.writer)
            } else if let postgres = stores.postgres {
                try await postgres.client.withTransaction(logger: postgres.logger) { connection in
                    try await connection.query("DELETE FROM album_release", logger: postgres.logger)
                    try await connection.query("DELETE FROM album_release_group", logger: postgres.logger)
                    let id = try #require(try await PostgresScrobbleStore.userID(of: ana, connection, postgres.logger))
                    try await PostgresScrobbleStore.recount(Self.everyWeek(), userID: id, connection, postgres.logger)
                }
                #expect(try await Self.weeks(archive, "OK Computer") == 10)
                for statement in ["DROP TABLE album_release", "DROP TABLE album_release_group",
                                  "DELETE FROM schema_migration WHERE name = 'album-releases'"] {
                    try await postgres.client.query(PostgresQuery(unsafeSQL: statement))
                }
                try await postgres.migrate()
            }
            #expect(try await archive.albumFolding(of: ana).sameRelease.count == 1)
            #expect(try await AlbumChoiceContractTests.countQueued(stores, ana) == 2)
            #expect(try await Self.weeks(archive, "OK Computer") == 21)
        }
    }

    /// Every week of the history, to count again with no ties to add.
    static func everyWeek() -> TouchedWeeks {
        var touched = TouchedWeeks()
        for s in history() + [tying] {
            touched.add(perhapsInserted: Scrobble(instant: s.instant, artist: s.artist, album: s.album, track: s.track))
        }
        return touched
    }

    @Test(arguments: Backend.allCases)
    func anErasedAccountsTiesAreGone(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: AlbumChoiceContractTests.now)
            try await archive.store(Self.history() + [Self.tying], of: zeb, origin: .lastFMExport)
            #expect(try await archive.albumFolding(of: zeb).sameRelease.count == 1)
            #expect(try await dump().contains { $0.value.contains(Self.okComputer) }, "the ties are kept")
            _ = try await eraser.erase(account)
            let left = try await dump().filter { $0.value.contains(Self.okComputer) || $0.value.contains(Self.tidewater)
                || $0.value.contains("oknotok") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
        }
    }
}
