import Foundation
import GRDB
import PostgresNIO
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import Sync
import Workers
@testable import PostgresStore
@testable import SQLiteStore

/// A person's choices about single albums on both stores: "Keep apart",
/// "Same album as…" and undo change every chart that counts them once the
/// job the change queued has counted the weeks it touched, and only those;
/// the choices go with the account.
@Suite struct AlbumChoiceContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let ana = try! Username("ana")

    /// 30 weeks: Tidewater and its deluxe edition every week, OK Computer
    /// and OKNOTOK on alternate weeks, and Low in every third.
    static func history() -> [Scrobble] {
        var scrobbles: [Scrobble] = []
        for week in 0..<30 {
            let start: Int64 = 1_700_000_000 + Int64(week) * 604_800
            func play(_ artist: String, _ album: String, _ count: Int, at offset: Int64) {
                for n in 0..<count {
                    scrobbles.append(Scrobble(instant: start + offset + Int64(n) * 300, artist: artist, album: album, track: "\(album) \(n)"))
                }
            }
            play("Vetiver", "Tidewater", 3, at: 0)
            play("Vetiver", "Tidewater (Deluxe Edition)", 2, at: 3_600)
            play("Radiohead", week % 2 == 0 ? "OK Computer" : "OKNOTOK 1997 2017", 2, at: 7_200)
            if week % 3 == 0 { play("Low", "HEY WHAT", 1, at: 10_800) }
        }
        return scrobbles
    }

    /// Runs the person's count as the runner would, on a claim of its job.
    static func countQueued(_ stores: StoreContractTests.Stores, _ user: Username) async throws -> Int {
        guard let claim = try await stores.jobs.claim(.albumFolding, key: user.key, as: "test", at: now, lease: 600, takingOverFrom: { _ in false })
        else { return 0 }
        var slices = 0
        while try await stores.scrobbles.countAgain(user, under: claim, at: now) { slices += 1 }
        #expect(try await stores.jobs.job(claim.job.id)?.state == .done)
        return slices + 1
    }

    /// Every week's kept album chart is what a count of `history` with
    /// the person's grouping gives.
    static func expectCharts(_ archive: any ScrobbleArchive, _ history: [Scrobble], weeks count: Int = 30,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let folding = try await archive.albumFolding(of: ana)
        let weeks = try await ArchiveChartSource(store: archive).chartList(for: ana).weeks.filter { week in history.contains { week.contains($0.instant) } }
        #expect(weeks.count == count, sourceLocation: sourceLocation)
        let charts = try #require(try await archive.charts(.album, of: ana, weeks: weeks))
        for (week, chart) in zip(weeks, charts) {
            var tally = ScrobbleTally.Tally(kind: .album, folding: folding)
            for s in history.sorted(by: WeeklyRollup.canonicalOrder) where week.contains(s.instant) { tally.add(s) }
            #expect(chart.entries == tally.ranked(), "\(week)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: Backend.allCases)
    func keepApartJoinAndUndoChangeTheChartsOnceCounted(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, history = Self.history(), ana = Self.ana
            try await archive.store(history, of: ana, origin: .lastFMExport)
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater")?.map(\.plays) == Array(repeating: 5, count: 30))
            let tidewater = try #require(try await archive.albumSpellings(of: ana, artist: "Vetiver", album: "Tidewater (Deluxe Edition)"))
            #expect(tidewater.plays == 150)
            #expect(tidewater.spellings.map(\.album) == ["Tidewater", "Tidewater (Deluxe Edition)"])
            #expect(tidewater.spellings.map(\.plays) == [90, 60])

            // Keep the deluxe edition apart.
            #expect(try await archive.changeAlbums(.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)"), of: ana, at: Self.now))
            #expect(try await !archive.changeAlbums(.keepApart(artist: "vetiver", album: "TIDEWATER (DELUXE EDITION)"), of: ana, at: Self.now))
            #expect(try await Self.countQueued(stores, ana) == 3, "30 weeks touched: two slices and the one that finds none")
            try await Self.expectCharts(archive, history)
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater")?.map(\.plays) == Array(repeating: 3, count: 30))
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater (Deluxe Edition)")?.map(\.plays)
                == Array(repeating: 2, count: 30))
            #expect(try await archive.albumSpellings(of: ana, artist: "Vetiver", album: "Tidewater")?.spellings.map(\.album) == ["Tidewater"])

            // Join OKNOTOK to OK Computer: only OKNOTOK's 15 weeks are counted again.
            #expect(try await archive.changeAlbums(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead",
                                                          toAlbum: "OK Computer"), of: ana, at: Self.now.addingTimeInterval(60)))
            #expect(try await Self.countQueued(stores, ana) == 2, "15 weeks: one slice and the one that finds none")
            try await Self.expectCharts(archive, history)
            let okComputer = try #require(try await archive.albumWeeks(of: ana, artist: "Radiohead", album: "OK Computer"))
            #expect(okComputer.count == 30)
            let joined = try #require(try await archive.albumSpellings(of: ana, artist: "Radiohead", album: "OKNOTOK 1997 2017"))
            #expect(joined.spellings.map(\.album) == ["OK Computer", "OKNOTOK 1997 2017"])

            let choices = try await archive.albumChoices(of: ana)
            #expect(choices.map(\.kind) == [.apart, .join])
            #expect(choices.map(\.album) == ["Tidewater (Deluxe Edition)", "OKNOTOK 1997 2017"])
            #expect(choices[1].targetAlbum == "OK Computer")

            // Undo both: the charts as the rule alone counts them.
            for choice in choices {
                #expect(try await archive.changeAlbums(.undo(choice.kind, key: choice.key), of: ana, at: Self.now.addingTimeInterval(120)))
            }
            #expect(try await archive.albumChoices(of: ana).isEmpty)
            #expect(try await archive.albumFolding(of: ana) == .editions)
            _ = try await Self.countQueued(stores, ana)
            try await Self.expectCharts(archive, history)
            #expect(try await archive.albumWeeks(of: ana, artist: "Radiohead", album: "OK Computer")?.count == 15)
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater")?.map(\.plays) == Array(repeating: 5, count: 30))
        }
    }

    /// Listens that arrive after a choice are counted with it, and a choice
    /// made while its person's count runs is counted by that run or by a
    /// job of its own, never lost.
    @Test(arguments: Backend.allCases)
    func aChoiceMadeWhileACountRunsIsCountedToo(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, history = Self.history(), ana = Self.ana
            try await archive.store(history, of: ana, origin: .lastFMExport)
            #expect(try await archive.changeAlbums(.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)"), of: ana, at: Self.now))
            let claim = try #require(try await stores.jobs.claim(.albumFolding, key: ana.key, as: "test", at: Self.now, lease: 600,
                                                                 takingOverFrom: { _ in false }))
            #expect(try await archive.countAgain(ana, under: claim, at: Self.now))
            // Meanwhile: another choice, and a new listen of the kept-apart spelling.
            #expect(try await archive.changeAlbums(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead",
                                                          toAlbum: "OK Computer"), of: ana, at: Self.now))
            let late = Scrobble(instant: 1_700_000_000 + 29 * 604_800 + 50_000, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "Late")
            try await archive.store([late], of: ana, origin: .lastFMExport)
            while try await archive.countAgain(ana, under: claim, at: Self.now) {}
            // Whatever is left (nothing, or a job of its own) is counted.
            _ = try await Self.countQueued(stores, ana)
            try await Self.expectCharts(archive, history + [late])
            #expect(try await archive.albumWeeks(of: ana, artist: "Vetiver", album: "Tidewater (Deluxe Edition)")?.last?.plays == 3)
        }
    }

    /// Someone whose listening is not archived may choose (their Last.fm
    /// charts fold by it); nothing is queued for them.
    @Test(arguments: Backend.allCases)
    func someoneNotArchivedChoosesWithoutAJob(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let bo = try Username("Bo")
            #expect(try await stores.scrobbles.changeAlbums(.keepApart(artist: "Low", album: "HEY WHAT (Deluxe)"), of: bo, at: Self.now))
            #expect(try await stores.scrobbles.albumFolding(of: bo).keptApart.count == 1)
            #expect(try await stores.jobs.jobs(of: .albumFolding, key: bo.key).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func anErasedAccountsChoicesAndWeeksToCountAreGone(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.now)
            try await archive.store(Self.history(), of: zeb, origin: .lastFMExport)
            #expect(try await archive.changeAlbums(.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)"), of: zeb, at: Self.now))
            #expect(try await archive.changeAlbums(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead",
                                                          toAlbum: "OK Computer"), of: zeb, at: Self.now))
            _ = try await eraser.erase(account)
            let left = try await dump().filter { $0.value.lowercased().contains("zebulon42") || $0.value.contains("Tidewater")
                || $0.value.contains("OKNOTOK") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
            #expect(try await archive.albumChoices(of: zeb).isEmpty)
        }
    }

    /// A database from before choices about single albums, with a count
    /// of the old kind queued (its job counted every week): the upgrade
    /// lists all its person's weeks, and the job, run once, counts them.
    @Test(arguments: Backend.allCases)
    func aCountQueuedBeforeTheUpgradeCountsEveryWeekOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, history = Self.history(), ana = Self.ana
            try await archive.store(history, of: ana, origin: .lastFMExport)
            // As an older release left it: the switch turned off, its job
            // queued, and no table of choices or weeks to count.
            let queued = Self.now.timeIntervalSince1970
            if let sqlite = stores.sqlite {
                try await sqlite.writer.write { db in
                    try db.execute(sql: """
                        DROP TABLE chart_recount; DROP TABLE album_choice;
                        DELETE FROM grdb_migrations WHERE identifier = 'album choices of single albums';
                        INSERT INTO album_folding (name_key, folds_editions, version) VALUES ('ana', 0, 1);
                        INSERT INTO job (kind, person, key, payload, state, not_before, queued_at, updated_at)
                        VALUES ('\(JobKind.albumFolding.rawValue)', 'ana', 'ana', '', 'queued', \(queued), \(queued), \(queued));
                        """)
                }
                try ArchiveDatabase.migrator(progress: nil).migrate(sqlite.writer)
            } else if let postgres = stores.postgres {
                for statement in ["DROP TABLE chart_recount", "DROP TABLE album_choice", "DELETE FROM schema_migration WHERE name = 'album-choices'",
                                  "INSERT INTO album_folding (name_key, folds_editions, version) VALUES ('ana', false, 1)",
                                  """
                                  INSERT INTO job (kind, person, key, payload, state, not_before, queued_at, updated_at)
                                  VALUES ('\(JobKind.albumFolding.rawValue)', 'ana', 'ana', '', 'queued', \(queued), \(queued), \(queued))
                                  """] {
                    try await postgres.client.query(PostgresQuery(unsafeSQL: statement))
                }
                try await postgres.migrate()
            }
            #expect(try await Self.countQueued(stores, ana) == 3, "30 weeks: two slices and the one that finds none")
            #expect(try await archive.albumFolding(of: ana) == .asSpelled)
            try await Self.expectCharts(archive, history)
            #expect(try await stores.jobs.jobs(of: .albumFolding, key: ana.key).map(\.state) == [.done])
        }
    }

    /// Counted again, a week's groups show the MusicBrainz id of their
    /// earliest scrobble that carried one, whichever spelling it was, as a
    /// count of the scrobbles in order gives (PostgreSQL counts plays per
    /// spelling in the database).
    @Test(arguments: Backend.allCases)
    func countedAgainAGroupShowsTheIdOfItsEarliestScrobbleWithOne(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, ana = Self.ana
            var history: [Scrobble] = []
            for week in 0..<3 {
                let start: Int64 = 1_700_000_000 + Int64(week) * 604_800
                // The deluxe spelling carries an id first; the plain one later, another.
                history.append(Scrobble(instant: start + 100, artist: "Vetiver", album: "Tidewater", track: "B"))
                history.append(Scrobble(instant: start + 200, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "A",
                                        artistMBID: "artist-\(week)-deluxe", albumMBID: "deluxe-\(week)"))
                history.append(Scrobble(instant: start + 300, artist: "Vetiver", album: "Tidewater", track: "C", albumMBID: "plain-\(week)"))
                // Two at one instant: the track's bytes decide which came first.
                history.append(Scrobble(instant: start + 400, artist: "Low", album: "HEY WHAT", track: "b", artistMBID: "low-b", albumMBID: "hey-b"))
                history.append(Scrobble(instant: start + 400, artist: "Low", album: "HEY WHAT (Deluxe)", track: "a", artistMBID: "low-a",
                                        albumMBID: "hey-a"))
                history.append(Scrobble(instant: start + 500, artist: "LOW", album: "hey what", track: "c"))
            }
            try await archive.store(history, of: ana, origin: .lastFMExport)
            for folding in [AlbumFolding.asSpelled, .editions] {
                #expect(try await archive.chooseAlbumFolding(folding, of: ana, at: Self.now))
                _ = try await Self.countQueued(stores, ana)
                let weeks = try await ArchiveChartSource(store: archive).chartList(for: ana).weeks.filter { week in
                    history.contains { week.contains($0.instant) }
                }
                #expect(weeks.count == 3)
                for kind in WeeklyRollup.kinds {
                    let charts = try #require(try await archive.charts(kind, of: ana, weeks: weeks))
                    for (week, chart) in zip(weeks, charts) {
                        var tally = ScrobbleTally.Tally(kind: kind, folding: folding)
                        for s in history.sorted(by: WeeklyRollup.canonicalOrder) where week.contains(s.instant) { tally.add(s) }
                        #expect(chart.entries == tally.ranked(), "\(kind) of \(week), \(folding)")
                    }
                }
            }
        }
    }
}

