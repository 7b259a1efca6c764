import Artwork
import SQLiteStore
import Stores
import Sync
import Foundation
import PostgresStore
import Testing
import TestSupport
import VinylogueCore

/// `vinylogue db copy` moves a home installation's SQLite data into
/// PostgreSQL, and can be run again with the same result.
@Suite struct DatabaseCopyTests {
    @Test func aHomeInstallationMovesToPostgreSQLAndACopyCanBeRepeated() async throws {
        let cluster = try TestCluster.url()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A household's list and settings, an account with its list and a
        // session, and saved Last.fm answers.
        let database = try ArchiveDatabase(directory: directory)
        let household = SQLiteListStore(database)
        try await household.addAll([Username("ybsc"), Username("RJ")])
        try await household.save(Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let (account, _) = try await SQLiteAccountStore(database).signedIn(Username("RJ"), lastFMSessionKey: "sk", at: now)
        try await household.owned(by: account.owner).addAll([Username("RJ"), Username("demo")])
        try await SQLiteAccountStore(database).startSession(digest: "d1", for: account, at: now, expires: .distantFuture, replacing: nil)
        try await SQLiteListenTokenStore(database).replaceToken(of: .household, digest: "t0", at: now)
        try await SQLiteListenTokenStore(database).replaceToken(of: account.owner, digest: "t1", at: now)
        // Forwarding: RJ's choices, a listen sent, one waiting, one being
        // sent by a sender that died (it comes over uncertain).
        let outbox = SQLiteForwardingOutbox(database)
        try await outbox.setForwardsToLastFM(true, for: account.owner, at: now)
        try await outbox.setListenBrainz(token: "lb-secret", user: "rj_lb", for: account.owner, at: now)
        let forwarded = (0..<3).map { ListenToForward(scrobble: Scrobble(instant: 1_699_990_000 + Int64($0) * 300, artist: "Sent On", album: "",
                                                                         track: "Forwarded \($0)"), duration: nil) }
        try await outbox.enqueue(forwarded, of: account.owner, to: [.lastFM], at: now)
        let forwardingJob = ForwardingJob(owner: account.owner, target: .lastFM)
        let claim = try #require(try await SQLiteJobQueue(database).claimNext(of: [.forwarding], on: "m", as: "m/1/dead", at: now, lease: 60,
                                                                               takingOverFrom: { _ in false }))
        let rows = try await outbox.due(for: forwardingJob, at: now, limit: 2).map(\.id)
        _ = try await outbox.record(OutboxMarks(sent: [rows[0]], sending: [rows[1]]), for: forwardingJob, under: claim, at: now)
        // RJ's weekly digest, confirmed; the household's, not yet.
        let digests = SQLiteDigestStore(database)
        _ = try await digests.save(account.owner, address: "rj@example.org", weekday: 2, hour: 8, years: 4, newToken: "rj-token", at: now)
        _ = try await digests.confirm(token: "rj-token", at: now)
        _ = try await digests.save(.household, address: "home@example.org", weekday: 7, hour: 20, years: 1, newToken: "home-token", at: now)
        let cache = ResponseCacheTable(database)
        for n in 0..<1_200 { await cache.store(Data("{\"n\":\(n)}".utf8), for: "user.getinfo&user=u\(n)", at: now, expires: .distantFuture) }
        let cover = try #require(ArtworkAddress(localPath: "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png"))
        try await SQLiteAlbumCoverStore(database).remember(.cover(cover), artist: "Paramore", name: "Paramore", at: now)
        try await SQLiteAlbumCoverStore(database).remember(.noCover, artist: "No Art", name: "Blank / 🎸", at: now)
        // A scrobble archive: 25,000 of alice's from several sources (more
        // than two pages of the copy), two at one instant, a sync left
        // unfinished; and the demo's generated history.
        let archive = SQLiteScrobbleStore(database: database)
        let alice = try Username("alice")
        let listens = (0..<25_000).map { (n: Int) -> Scrobble in
            let instant: Int64 = 1_500_000_000 + Int64(n / 2) * 300
            let album: String = n % 9 == 0 ? "" : "Album \(n % 70)"
            let mbid: String? = n % 5 == 0 ? "mbid-\(n % 70)" : nil
            return Scrobble(instant: instant, artist: "Artist \(n % 40)", album: album, track: "Track \(n % 2)\t\(n % 13)", albumMBID: mbid)
        }
        try await archive.store(Array(listens[..<15_000]), of: alice, origin: .lastFMExport)
        try await archive.store(Array(listens[15_000...]), of: alice, origin: .listenBrainz)
        #expect(try await archive.chooseAlbumFolding(.asSpelled, of: alice, at: now))
        #expect(try await archive.changeAlbums(.keepApart(artist: "Artist 1", album: "Album 1 (Deluxe)"), of: alice, at: now))
        let pending = SyncState(fromInstant: 1, toInstant: 2, nextPage: 3, totalPages: 4, pageSize: 200)
        try await archive.beginSync(pending, of: alice)
        let demoFilled = try await GeneratedHistory(history: DemoHistory(seed: 3, start: 1_293_969_600), store: archive)
            .fill(now: Date(timeIntervalSince1970: 1_293_969_600 + 400 * 86_400))

        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
            // A copy that stopped after its first 10,000 scrobbles.
            try await PostgresDatabase.with(url: url) { postgres in
                try await postgres.migrate()
                let first = try await PersonalDataExport(database).scrobbles(of: alice, from: .min, limit: 10_000)
                try await PostgresCopy(postgres).write(first, of: alice)
            }
            for _ in 0..<2 {
                let run = try await vinylogue(["db", "copy", "--from", directory.path, "--to", url])
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stdout.contains("  list entries: 4\n"), "\(run.stdout)")
                #expect(run.stdout.contains("  saved Last.fm answers: 1200\n"))
                #expect(run.stdout.contains("  remembered covers: 2\n"))
                #expect(run.stdout.contains("  listen tokens: 2\n"))
                #expect(run.stdout.contains("  forwarding choices: 1\n"))
                #expect(run.stdout.contains("  digest subscriptions: 2\n"))
                #expect(run.stdout.contains("  album choices: 1\n"), "\(run.stdout)")
                #expect(run.stdout.contains("  albums kept apart or joined: 1\n"), "\(run.stdout)")
                #expect(run.stdout.contains("  listens to forward (sent or not): 3\n"))
                #expect(run.stdout.contains("  scrobbles of alice: 25,000\n"), "\(run.stdout)")
                #expect(run.stdout.contains("Counts checked"))
            }
            try await PostgresDatabase.with(url: url) { postgres in
                #expect(try await PostgresScrobbleStore(postgres).albumFolding(of: alice).foldsEditions == false)
                #expect(try await PostgresScrobbleStore(postgres).albumChoices(of: alice) == archive.albumChoices(of: alice))
                let lists = PostgresListStore(postgres)
                #expect(try await lists.users().map(\.name) == ["ybsc", "RJ"])
                #expect(try await lists.settings() == Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
                #expect(try await lists.owned(by: account.owner).users().map(\.name) == ["RJ", "demo"])
                let accounts = PostgresAccountStore(postgres)
                #expect(try await accounts.account(forSession: "d1", at: now)?.name.value == "RJ")
                let tokens = PostgresListenTokenStore(postgres)
                #expect(try await tokens.holder(ofToken: "t0") == ListenTokenHolder(owner: .household, accountName: nil))
                #expect(try await tokens.holder(ofToken: "t1") == ListenTokenHolder(owner: account.owner, accountName: try Username("RJ")))
                // Forwarding goes on from the fleet: the choices, the one sent
                // stays sent, the claimed one is checked before it is sent.
                let fleetOutbox = PostgresForwardingOutbox(postgres)
                let choice = try await fleetOutbox.choice(of: account.owner)
                #expect(choice.toLastFM && choice.listenBrainzToken == "lb-secret" && choice.listenBrainzUser == "rj_lb")
                #expect(try await fleetOutbox.states(of: account.owner)[.lastFM] == ForwardingState(sent: 1, waiting: 2, lastSent: now))
                let due = try await fleetOutbox.due(for: forwardingJob, at: now, limit: 50)
                #expect(due.map(\.listen) == Array(forwarded.dropFirst()))
                #expect(due.map(\.uncertain) == [true, false])
                // Their owner's job for the service came with them.
                let fleetJobs = try await PostgresJobQueue(postgres).jobs(of: .forwarding, key: forwardingJob.key)
                #expect(fleetJobs.map(\.state) == [.queued] && fleetJobs.first?.person == "rj")
                // The digests go on: the same addresses, schedules, links and confirmations.
                let fleetDigests = PostgresDigestStore(postgres)
                let rj = try #require(try await fleetDigests.subscription(token: "rj-token"))
                #expect(rj.owner == account.owner && rj.address == "rj@example.org" && rj.weekday == 2 && rj.hour == 8 && rj.years == 4)
                #expect(rj.confirmedAt == now)
                let home = try #require(try await fleetDigests.subscription(of: .household))
                #expect(home.token == "home-token" && !home.isConfirmed && home.weekday == 7 && home.hour == 20)
                // A new account after the copy does not take a copied id.
                let (next, isNew) = try await accounts.signedIn(Username("ybsc"), lastFMSessionKey: "sk2", at: now)
                #expect(isNew && next.id > account.id)
                let saved = PostgresResponseCache(postgres, coordination: postgres, clock: .fixed(now))
                #expect(await saved.lookup("user.getinfo&user=u1199")?.body == Data("{\"n\":1199}".utf8))
                // The archive, row for row, and charted the same.
                let copied = PostgresScrobbleStore(postgres)
                let covers = PostgresAlbumCoverStore(postgres)
                #expect(try await covers.answer(artist: "paramore", name: "PARAMORE") == .cover(cover))
                #expect(try await covers.answer(artist: "No Art", name: "Blank / 🎸") == .noCover)
                #expect(try await copied.scrobbles(of: alice, from: .min, to: .max) == archive.scrobbles(of: alice, from: .min, to: .max))
                #expect(try await copied.syncStart(of: alice).pending == pending)
                #expect(try await copied.scrobbleCount(of: DemoHistory.username) == demoFilled)
                #expect(try await copied.generatedThrough(of: DemoHistory.username) == archive.generatedThrough(of: DemoHistory.username))
                let weeks = try await ArchiveChartSource(store: archive).chartList(for: alice).weeks
                #expect(try await ArchiveChartSource(store: copied).charts(for: alice, kind: .album, weeks: weeks)
                    == ArchiveChartSource(store: archive).charts(for: alice, kind: .album, weeks: weeks))
            }
        }
    }

    @Test func aDirectoryWithoutDataIsSaidSo() async throws {
        let run = try await vinylogue(["db", "copy", "--from", "/nonexistent/vinylogue", "--to", "postgres://u@127.0.0.1:1/x"])
        #expect(run.status == 4)
        #expect(run.stderr.contains("There is no Vinylogue data in /nonexistent/vinylogue. Give the directory serve uses (its --data-dir) with --from."))
    }
}

/// `vinylogue db backup PATH` copies a data directory and says how to
/// restore it; it refuses a destination that holds something.
@Suite struct DatabaseBackupCommandTests {
    @Test func aDataDirectoryIsBackedUpAndTheCopyServesCharts() async throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data"), copy = dir.url.appendingPathComponent("copy")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: data))
        let rj = try Username("RJ")
        _ = try await store.store([Scrobble(instant: 1_688_800_000, artist: "Low", album: "HEY WHAT", track: "White Horses")], of: rj, origin: .received)
        let run = try await vinylogue(["db", "backup", copy.path, "--data-dir", data.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("1 scrobble of 1 person"), "\(run.stdout)")
        #expect(run.stdout.contains("To restore: stop serve, then start it with --data-dir \(copy.path)."))
        #expect(try await SQLiteScrobbleStore(database: try ArchiveDatabase(directory: copy)).scrobbleCount(of: rj) == 1)

        let again = try await vinylogue(["db", "backup", copy.path, "--data-dir", data.path])
        #expect(again.status == 2)
        #expect(again.stderr.contains("\(copy.path) is not empty; a backup goes into a new directory."), "\(again.stderr)")
        // A directory that was there before is never one to remove.
        #expect(again.stderr.contains("Give a new directory") && !again.stderr.contains("Remove "), "\(again.stderr)")
        let nothing = try await vinylogue(["db", "backup", dir.url.appendingPathComponent("other").path, "--data-dir", dir.url.appendingPathComponent("none").path])
        #expect(nothing.status == 4)
        #expect(nothing.stderr.contains("There is no Vinylogue data in"), "\(nothing.stderr)")
    }
}
