import SQLiteStore
import Stores
import Sync
import Foundation
import LastFMTestServer
import PostgresStore
import Testing
import TestSupport
import VinylogueCore

/// `vinylogue art fetch USER`, run as the real binary against the local
/// Last.fm server: every archived album's cover resolved once (by
/// MusicBrainz id or by name), "no cover" remembered, images kept, the rate
/// limit kept, an interrupted run resumed, failures said with a next step.
@Suite struct ArtFetchCommandTests {
    /// A data directory holding an archive for `collector`, removed afterwards.
    final class Archived {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-art-\(UUID().uuidString)")
        var path: String { url.path }
        deinit { try? FileManager.default.removeItem(at: url) }

        /// Paramore's `Paramore` carries the MusicBrainz id the captured
        /// `album.getinfo` answers to; the others are looked up by name.
        static let paramoreMBID = "0b2345b3-1984-4e96-b60f-427827b9716a"
        static let albums: [(artist: String, album: String, plays: Int, mbid: String?)] = [
            ("Paramore", "Paramore", 9, paramoreMBID),
            ("AC/DC", "Back \"in\" Black / 🎸", 8, nil),
            ("Björk", "Homogenic", 7, nil),
            ("No Art", "Blank", 6, nil),
            ("Portishead", "Dummy", 5, nil),
            ("Sigur Rós", "( )", 4, nil),
            ("🦆", "Quack?query=1#frag", 3, nil),
            ("Low", "Things We Lost in the Fire", 2, nil),
            ("Slint", "Spiderland", 1, nil),
        ]

        init() async throws {
            let database = try ArchiveDatabase(directory: url)
            var scrobbles: [Scrobble] = []
            let t: Int64 = 1_593_950_400
            for album in Self.albums {
                for n in 0..<album.plays {
                    scrobbles.append(Scrobble(instant: t + Int64(scrobbles.count) * 300, artist: album.artist, album: album.album,
                                              track: "Track \(n)", albumMBID: album.mbid))
                }
            }
            try await SQLiteScrobbleStore(database: database).store(scrobbles, of: Username("collector"), origin: .lastFMExport)
        }

        /// The remembered answers, read straight from the database.
        func remembered() async throws -> [AlbumKey: CoverAnswer] {
            let store = SQLiteAlbumCoverStore(try ArchiveDatabase(directory: url))
            return try await store.answers(for: Self.albums.map { AlbumKey(artist: $0.artist, album: $0.album) })
        }

        func keptImages() -> [String] {
            let kept = url.appendingPathComponent("art-kept/300x300")
            return ((try? FileManager.default.contentsOfDirectory(atPath: kept.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        }
    }

    static func environment(_ base: [String: String], perSecond: Int = 50) -> [String: String] {
        base.merging(["LASTFM_IMAGE_URL": base["LASTFM_API_URL"]!.replacingOccurrences(of: "2.0/", with: "i/u/"),
                      "LASTFM_REQUESTS_PER_SECOND": String(perSecond)]) { _, new in new }
    }

    @Test func resolvesEveryAlbumOnceWithinTheRateLimitAndASecondRunAsksNothing() async throws {
        try await withFakeEnvironment { fake, env in
            await fake.removeCover(artist: "No Art", album: "Blank")
            let archived = try await Archived()
            let run = try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path], environment: Self.environment(env, perSecond: 2))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("Covers for collector: 9 albums in the archive."), "\(run.stdout)")
            #expect(run.stdout.contains("8 covers found, 1 without a cover on Last.fm, 0 already done; 8 images downloaded."), "\(run.stdout)")
            #expect(run.stdout.contains("Kept for offline use: 8 images"))

            let asked = await fake.requests().filter { $0.method == "album.getinfo" }
            #expect(asked.count == 9, "one question per album")
            #expect(asked.filter { $0.parameters["mbid"] != nil }.map { $0.parameters["mbid"] } == [Archived.paramoreMBID], "by MusicBrainz id")
            let byName = Set(asked.compactMap { r in r.parameters["artist"].map { "\($0)|\(r.parameters["album"] ?? "")" } })
            #expect(byName == Set(Archived.albums.dropFirst().map { "\($0.artist)|\($0.album)" }), "the rest by name, names intact")
            #expect(asked.prefix(2).contains { $0.parameters["mbid"] == Archived.paramoreMBID }, "most played first")
            // The rate limit, as the fake saw it: any three arrivals span a second.
            let arrivals = asked.map(\.received).sorted()
            for i in 0..<(arrivals.count - 2) {
                #expect(arrivals[i + 2] - arrivals[i] >= 0.95, "3 requests within \(arrivals[i + 2] - arrivals[i]) s")
            }

            let remembered = try await archived.remembered()
            #expect(remembered.count == 9)
            #expect(remembered[AlbumKey(artist: "no art", album: "blank")] == .noCover)
            #expect(remembered[AlbumKey(artist: "AC/DC", album: "Back \"in\" Black / 🎸")]?.address?.localPath
                == FakeLastFM.coverPath(artist: "AC/DC", album: "Back \"in\" Black / 🎸"))
            #expect(remembered[AlbumKey(artist: "paramore", album: "paramore")]?.address?.localPath == "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")
            #expect(archived.keptImages().count == 8)
            #expect(await fake.imagesServed().count == 8)

            // Again: every answer is remembered and every image kept.
            await fake.clearLog()
            let again = try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path], environment: Self.environment(env))
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("0 covers found, 0 without a cover on Last.fm, 9 already done."), "\(again.stdout)")
            #expect(await fake.requests().isEmpty, "nothing asked twice, \"no cover\" included")
            #expect(await fake.imagesServed().count == 8, "no image fetched twice")

            // Art added to Last.fm since: asked for, the album without a cover is asked about again, and only it.
            let askedAgain = try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path, "--ask-again-without-cover"],
                                            environment: Self.environment(env))
            #expect(askedAgain.status == 0, "\(askedAgain.stderr)")
            #expect(askedAgain.stdout.contains("0 covers found, 1 without a cover on Last.fm, 8 already done."), "\(askedAgain.stdout)")
            #expect(await fake.requests().map { $0.parameters["album"] } == ["Blank"])
        }
    }

    /// With `--database`, the answers go to PostgreSQL, where every
    /// instance of a fleet finds them; the images to the data directory.
    @Test func withADatabaseTheAnswersAreTheFleets() async throws {
        let cluster = try TestCluster.url()
        try await withFakeEnvironment { fake, env in
            await fake.removeCover(artist: "No Art", album: "Blank")
            try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
                let scrobbles = Archived.albums.enumerated().map { n, album in
                    Scrobble(instant: 1_593_950_400 + Int64(n) * 300, artist: album.artist, album: album.album, track: "T", albumMBID: album.mbid)
                }
                try await PostgresDatabase.with(url: url) { database in
                    _ = try await PostgresScrobbleStore(database).store(scrobbles, of: Username("collector"), origin: .lastFMExport)
                }
                let images = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-art-pg-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: images) }
                let run = try await vinylogue(["art", "fetch", "collector", "--database", url, "--data-dir", images.path],
                                              environment: Self.environment(env))
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stdout.contains("8 covers found, 1 without a cover on Last.fm, 0 already done; 8 images downloaded."), "\(run.stdout)")
                try await PostgresDatabase.with(url: url) { database in
                    let answers = try await PostgresAlbumCoverStore(database).answers(for: Archived.albums.map { AlbumKey(artist: $0.artist, album: $0.album) })
                    #expect(answers.count == 9)
                    #expect(answers[AlbumKey(artist: "No Art", album: "Blank")] == .noCover)
                }
                #expect(!ArchiveDatabase.exists(in: images), "no SQLite archive beside a PostgreSQL one")
            }
        }
    }

    @Test func anInterruptedRunResumesWithoutAskingAgain() async throws {
        try await withFakeEnvironment { fake, env in
            let archived = try await Archived()
            // Last.fm answers the first questions only when the test says so.
            await fake.inject(FakeLastFM.FaultRule(.held, method: "album.getinfo"))
            let process = try startVinylogue(["art", "fetch", "collector", "--data-dir", archived.path], environment: Self.environment(env, perSecond: 2))
            await fake.untilHolding(2)
            process.process.interrupt()  // Ctrl-C
            try await Task.sleep(for: .milliseconds(300))
            await fake.clearFaults()
            await fake.releaseHeld()
            let first = try await process.finished()
            #expect(first.status == 130, "\(first.stdout)\n\(first.stderr)")
            #expect(first.stderr.contains("Interrupted. Everything fetched so far is kept; run the same command again to carry on."))
            #expect(first.stdout.contains("albums not tried yet"), "\(first.stdout)")
            let rememberedFirst = try await archived.remembered()
            #expect(rememberedFirst.count < 9)

            // Run again until done: on a loaded machine an image may miss its
            // 10 s deadline (the run then lists it and says to run again),
            // and each further run carries on without asking anything twice.
            await fake.clearLog()
            var runs: [Run] = []
            repeat {
                runs.append(try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path],
                                                environment: Self.environment(env, perSecond: 2)))
            } while runs.last?.status == 3 && runs.count < 4 && runs.last!.stdout.contains("for the album art")
            let last = try #require(runs.last)
            #expect(last.status == 0, "\(last.stdout)\n\(last.stderr)")
            #expect(runs[0].stdout.contains("Covers for collector: 9 albums in the archive."), "\(runs[0].stdout)")
            let askedAgain = await fake.requests().filter { $0.method == "album.getinfo" }
            #expect(askedAgain.count == 9 - rememberedFirst.count, "only the albums the first run did not finish, each once")
            #expect(try await archived.remembered().count == 9)
            #expect(archived.keptImages().count == 9)
        }
    }

    @Test func withoutAnAPIKeyItSaysHowToGetOne() async throws {
        try await withFakeEnvironment { fake, env in
            let archived = try await Archived()
            var environment = Self.environment(env)
            environment["LASTFM_API_KEY"] = ""
            let run = try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path], environment: environment)
            #expect(run.status == 4)
            #expect(run.stderr.contains("No Last.fm API key is configured."))
            #expect(run.stderr.contains("export LASTFM_API_KEY=yourkey"))
            #expect(await fake.requests().isEmpty)
        }
    }

    @Test func withLastFMUnreachableItStopsAndSaysWhatToDo() async throws {
        let archived = try await Archived()
        // Nothing listens on port 9 of this machine (discard is not run here).
        let env = ["LASTFM_API_URL": "http://127.0.0.1:9/2.0/", "LASTFM_API_KEY": "test-key"]
        let run = try await vinylogue(["art", "fetch", "collector", "--data-dir", archived.path], environment: Self.environment(env))
        #expect(run.status == 3, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stderr.contains("Could not reach Last.fm"))
        #expect(run.stderr.contains("Check the network connection"))
        #expect(run.stderr.contains("run the same command again to carry on"))
        #expect(try await archived.remembered().isEmpty, "a failure is not an answer")
    }

    @Test func aDirectoryWithoutAnArchiveIsSaidSoAndLeftAlone() async throws {
        try await withFakeEnvironment { _, env in
            let empty = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-art-none-\(UUID().uuidString)")
            let run = try await vinylogue(["art", "fetch", "collector", "--data-dir", empty.path], environment: Self.environment(env))
            #expect(run.status == 2)
            #expect(run.stderr.contains("There is no archive in \(empty.path), so there are no covers to fetch. Give the --data-dir"))
            #expect(!FileManager.default.fileExists(atPath: empty.path))
        }
    }

    @Test func aUserWithNothingArchivedIsToldHowToArchive() async throws {
        try await withFakeEnvironment { _, env in
            let archived = try await Archived()
            let run = try await vinylogue(["art", "fetch", "nobody", "--data-dir", archived.path], environment: Self.environment(env))
            #expect(run.status == 2)
            #expect(run.stderr.contains("Nothing with an album name is archived for “nobody” here"))
            #expect(run.stderr.contains("Run `vinylogue sync nobody` or `vinylogue import FILE --user nobody` first"))
        }
    }
}

/// A `vinylogue` process still running, for tests that interrupt it.
struct RunningVinylogue {
    let process: ChildProcess
    let home: URL
    let exit: Task<Int32, Never>

    func finished() async throws -> Run {
        let status = await exit.value
        defer { try? FileManager.default.removeItem(at: home) }
        return Run(status: status, stdout: try String(contentsOf: home.appendingPathComponent("stdout"), encoding: .utf8),
                   stderr: try String(contentsOf: home.appendingPathComponent("stderr"), encoding: .utf8))
    }
}

/// Starts `vinylogue` as `vinylogue(_:environment:)` does, without waiting.
func startVinylogue(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningVinylogue {
    let process = ChildProcess()
    process.executableURL = try vinylogueBinary()
    process.arguments = arguments
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    process.environment = ["PATH": "/usr/bin:/bin", "HOME": home.path, "TZ": "UTC", "XDG_DATA_HOME": home.appendingPathComponent("data").path]
        .merging(environment) { _, new in new }
    let out = home.appendingPathComponent("stdout"), err = home.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = FileHandle.nullDevice
    let (statuses, continuation) = AsyncStream.makeStream(of: Int32.self)
    process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
    try process.run()
    let exit = Task { for await status in statuses { return status }; return -1 }
    return RunningVinylogue(process: process, home: home, exit: exit)
}
