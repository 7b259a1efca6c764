import Foundation
import LastFMTestServer
import Testing
import TestSupport
import VinylogueCore
import ZIPFoundation
import SQLiteStore
import Stores

/// What one run of the `vinylogue` binary did.
struct Run {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The built `vinylogue` executable, next to the test bundle.
func vinylogueBinary() throws -> URL {
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [here, Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()] {
        let url = candidate.appendingPathComponent("vinylogue")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "vinylogue next to \(here.path)"])
}

/// Runs `vinylogue` with `arguments` in a clean environment plus
/// `environment`, in `directory` when given.
func vinylogue(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil) async throws -> Run {
    let process = ChildProcess()
    process.executableURL = try vinylogueBinary()
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    process.environment = ["PATH": "/usr/bin:/bin", "HOME": home.path, "TZ": "UTC", "XDG_DATA_HOME": home.appendingPathComponent("data").path]
        .merging(environment) { _, new in new }
    let out = home.appendingPathComponent("stdout"), err = home.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = FileHandle.nullDevice
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    return Run(status: status, stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
}

/// Runs `body` with a fake Last.fm and the environment that points at it.
func withFakeEnvironment(_ body: @Sendable (FakeLastFM, [String: String]) async throws -> Void) async throws {
    let fake = try FakeLastFM(clock: .system)
    try await FakeLastFMServer.withRunning(fake) { url in
        try await body(fake, ["LASTFM_API_URL": url, "LASTFM_API_KEY": "test-key"])
    }
}

@Suite struct ChartCommandTests {
    @Test func printsTheCapturedWeekAsJSON() async throws {
        try await withFakeEnvironment { _, env in
            let run = try await vinylogue(["chart", "ybsc", "--week", "2020-07-08", "--json"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(json["user"] as? String == "ybsc")
            let week = try #require(json["week"] as? [String: Any])
            #expect(week["from"] as? Int == 1_593_950_400 && week["to"] as? Int == 1_594_555_200)
            let entries = try #require(json["entries"] as? [[String: Any]])
            #expect(entries.count == 13)
            #expect(entries.map { $0["rank"] as? Int } == Array(1...13))
            #expect(entries[0]["artist"] as? String == "PUP")
            #expect(entries[0]["name"] as? String == "Live at The Electric Ballroom")
            #expect(entries[0]["plays"] as? Int == 22)
        }
    }

    @Test func printsATableWithoutColourWhenNotATerminal() async throws {
        try await withFakeEnvironment { _, env in
            let run = try await vinylogue(["chart", "ybsc", "--week", "2020-07-08", "--min-plays", "10"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("Week 28 · Jul 5 – 12, 2020"))
            #expect(run.stdout.contains("PUP"))
            #expect(!run.stdout.contains("Nova Charisma"))  // 3 plays, filtered
            #expect(run.stdout.contains("4 albums with 10 plays or fewer are hidden."))
            #expect(!run.stdout.contains("\u{1B}["))
        }
    }

    @Test func anUnknownUserExits2() async throws {
        try await withFakeEnvironment { _, env in
            let run = try await vinylogue(["chart", "nosuchuser", "--years-ago", "2"], environment: env)
            #expect(run.status == 2)
            #expect(run.stderr.contains("not found"))
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func syncingAnUnknownUserExits2AndStoresNothing() async throws {
        try await withFakeEnvironment { fake, env in
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-sync-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: data) }
            let run = try await vinylogue(["sync", "nosuchuser", "--data-dir", data.path], environment: env)
            #expect(run.status == 2)
            #expect(run.stderr.contains("The user “nosuchuser” was not found on Last.fm."))
            #expect(await fake.requests().allSatisfy { $0.method == "user.getinfo" })
            // Nothing was archived under that name.
            let chart = try await vinylogue(["chart", "nosuchuser", "--source", "archive", "--data-dir", data.path], environment: env)
            #expect(chart.status == 2)
            #expect(chart.stderr.contains("Nothing is archived for “nosuchuser” yet. Run `vinylogue sync nosuchuser`"))
        }
    }

    /// `serve` on a port another program holds says so and exits 4.
    @Test func servingOnABusyPortSaysSo() async throws {
        try await withFakeEnvironment { _, env in
            // The fake Last.fm is listening on this port.
            let port = try #require(URL(string: env["LASTFM_API_URL"]!)?.port)
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-port-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: data) }
            let run = try await vinylogue(["serve", "--port", String(port), "--data-dir", data.path], environment: env)
            #expect(run.status == 4)
            #expect(run.stderr.contains("Port \(port) on 127.0.0.1 is already in use. Stop the program using it, or choose another port with --port."))
        }
    }

    /// A database address that is not PostgreSQL's is one sentence, exit 4,
    /// and the address (which may hold a password) is not repeated.
    @Test func aDatabaseAddressThatIsNotOneIsRefused() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-db-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let run = try await vinylogue(["serve", "--port", "0", "--data-dir", data.path, "--database", "mysql://me:s3cret@db/x"])
        #expect(run.status == 4)
        #expect(run.stderr.contains("The PostgreSQL database could not be used: its address must look like postgres://user:password@host:5432/database. Check --database (or DATABASE_URL)."), "\(run.stderr)")
        #expect(!run.stderr.contains("s3cret"))
    }

    /// `serve --idle-timeout` takes seconds above zero; anything else is a usage error.
    @Test func anIdleTimeoutOfZeroIsRefused() async throws {
        for value in ["0", "-1", "99999"] {
            let run = try await vinylogue(["serve", "--idle-timeout=\(value)"])
            #expect(run.status == 1, "\(value)")
            #expect(run.stderr.contains("--idle-timeout must be more than 0 and at most 3600 seconds."), "\(value): \(run.stderr)")
        }
    }

    /// `serve --tls-certificate` and `--tls-key` go together; a file that is
    /// not PEM is one sentence naming it, exit 4.
    @Test func tlsOptionsAreCheckedBeforeServing() async throws {
        let alone = try await vinylogue(["serve", "--tls-certificate", "/nonexistent/cert.pem"])
        #expect(alone.status == 1)
        #expect(alone.stderr.contains("--tls-certificate and --tls-key go together"), "\(alone.stderr)")
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let certificate = data.appendingPathComponent("cert.pem")
        try Data("not a certificate".utf8).write(to: certificate)
        let run = try await vinylogue(["serve", "--port", "0", "--data-dir", data.path, "--tls-certificate", certificate.path,
                                       "--tls-key", data.appendingPathComponent("key.pem").path])
        #expect(run.status == 4)
        #expect(run.stderr.contains("The TLS certificate chain could not be read from \(certificate.path): it must be a readable PEM file. Check --tls-certificate and --tls-key"), "\(run.stderr)")
    }

    /// A data directory whose database is not SQLite is reported in plain
    /// words and left exactly as it was.
    @Test func aDamagedDatabaseIsReportedAndLeftAlone() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-damaged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let file = data.appendingPathComponent("vinylogue.sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: file)
        let run = try await vinylogue(["chart", "demo", "--data-dir", data.path])
        #expect(run.status != 0)
        #expect(run.stderr.contains("file is not a database"), "\(run.stderr)")
        #expect(!run.stderr.contains("NSCocoaErrorDomain") && !run.stderr.contains("UserInfo"))
        #expect(try Data(contentsOf: file) == garbage)
        let blocked = try await vinylogue(["chart", "demo", "--data-dir", file.appendingPathComponent("inside").path])
        #expect(blocked.stderr.contains("could not be created: "), "\(blocked.stderr)")
        #expect(!blocked.stderr.contains("NSCocoaErrorDomain"))
    }

    @Test func aMissingKeyExits4AndSaysWhereToGetOne() async throws {
        let run = try await vinylogue(["chart", "ybsc"], environment: ["LASTFM_API_URL": "http://127.0.0.1:9/2.0/"])
        #expect(run.status == 4)
        #expect(run.stderr.contains("https://www.last.fm/api/account/create"))
        #expect(run.stderr.contains("LASTFM_API_KEY"))
    }

    @Test(arguments: [(11, Int32(3)), (29, 3), (8, 3), (10, 4), (26, 4), (17, 2), (6, 2)])
    func upstreamErrorsMapToExitCodes(code: Int, exit: Int32) async throws {
        try await withFakeEnvironment { fake, env in
            await fake.inject(.init(.apiError(code: code, status: 200)))
            let run = try await vinylogue(["chart", "ybsc", "--week", "2020-07-08"], environment: env.merging(["LASTFM_REQUESTS_PER_SECOND": "50"]) { $1 })
            #expect(run.status == exit, "\(run.stderr)")
            #expect(run.stderr.hasPrefix("vinylogue: "))
            #expect(!run.stderr.contains("Fatal") && !run.stderr.contains("0x"))
        }
    }

    @Test(arguments: [["chart"], ["chart", "ybsc", "--years-ago", "0"], ["chart", "ybsc", "--week", "2020-13-01"],
                      ["chart", "a!", "--source", "demo"], ["chart", "ybsc", "--kind", "song"], ["nonsense"]])
    func usageErrorsExit1(arguments: [String]) async throws {
        let run = try await vinylogue(arguments)
        #expect(run.status == 1, "\(arguments): \(run.stderr)")
        #expect(!run.stderr.isEmpty)
    }

    @Test func theDemoWorksWithoutNetworkOrKey() async throws {
        let run = try await vinylogue(["chart", "demo", "--years-ago", "3", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect((json["entries"] as? [Any])?.isEmpty == false)
        #expect(json["yearsAgo"] as? Int == 3)
    }

    @Test func yearsListsTheYearsWithACharts() async throws {
        let run = try await vinylogue(["years", "demo"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("1 year ago"))
        #expect(run.stdout.contains("10 years ago"))
    }

    @Test func userPrintsTheCanonicalName() async throws {
        try await withFakeEnvironment { _, env in
            let run = try await vinylogue(["user", "YBSC"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("ybsc\n"))
            #expect(run.stdout.contains("Christopher Trott"))
        }
    }

    @Test func helpExits0() async throws {
        let run = try await vinylogue(["--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Exit codes"))
    }
}

/// The test-only clock of `serve` (`VINYLOGUE_TEST_NOW`, used by the browser
/// tests to put the server on the dates that matter) is never ignored
/// quietly: a value that is not an instant stops `serve` with a sentence.
@Suite struct TestClockSettingTests {
    @Test func anUnreadableTestNowStopsServe() async throws {
        let run = try await vinylogue(["serve", "--demo", "--port", "0"], environment: ["VINYLOGUE_TEST_NOW": "next tuesday"])
        #expect(run.status == 4, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("VINYLOGUE_TEST_NOW is “next tuesday”: give an instant as ISO 8601"), "\(run.stderr)")
    }

    @Test func instantsAreReadAsISO8601OrSeconds() throws {
        #expect(WallClock.instant("2024-02-29T11:59:00Z") == Date(timeIntervalSince1970: 1_709_207_940))
        #expect(WallClock.instant("1709207940") == Date(timeIntervalSince1970: 1_709_207_940))
        #expect(WallClock.instant("2024-02-29") == nil)
        #expect(WallClock.instant("nan") == nil)
        // Out of range, or a day or time that does not exist (a probe
        // crashed serve with 1e300 and ran it on March 1 for Feb 30).
        for text in ["1e300", "-1e300", "1e12", "0", "2024-02-30T00:00:00Z", "2023-02-29T12:00:00Z", "2024-01-01T24:00:00Z",
                     "2024-01-01T23:59:60Z"] {
            #expect(WallClock.instant(text) == nil, "\(text)")
        }
        #expect(WallClock.instant("2028-02-29T23:59:00+02:00") != nil)
    }
}

/// The history, as a new user's Last.fm export has it: albums
/// played years ago under one name and this year under their reissues'.
@Suite struct EditionsCommandTests {
    static func history(now: Date) -> String {
        var lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
        func play(_ instant: Int64, _ artist: String, _ album: String, _ count: Int) {
            for n in 0..<count { lines.append("\(instant + Int64(n) * 600),x,\(artist),,\(album),,Track \(n % 9),") }
        }
        let today = Int64(now.timeIntervalSince1970)
        for yearsAgo in 12...14 {
            let then = today - Int64(Double(yearsAgo) * 365.2425 * 86_400)
            play(then, "The Beatles", "Abbey Road", 9)
            play(then + 5 * 3_600, "Fleetwood Mac", "Rumours", 9)
            play(then + 10 * 3_600, "Lower Dens", "White Crosses", 9)
            play(then + 15 * 3_600, "Vetiver", "Tidewater", 9)
        }
        let lately = today - 30 * 86_400
        play(lately, "The Beatles", "Abbey Road (Remastered)", 12)
        play(lately + 3 * 3_600, "The Beatles", "Abbey Road (2019 Mix)", 8)
        play(lately - 86_400, "Fleetwood Mac", "Rumours (Super Deluxe)", 6)
        play(lately - 2 * 86_400, "Lower Dens", "White Crosses [Limited Edition]", 5)
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func albumLifeAndRediscoverCountTheReissuesAsTheAlbum() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        try Self.history(now: Date()).write(to: export, atomically: true, encoding: .utf8)
        let data = dir.url.appendingPathComponent("data").path
        let imported = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", data])
        #expect(imported.status == 0, "\(imported.stderr)")

        let life = try await vinylogue(["album", "ana", "The Beatles", "Abbey Road", "--data-dir", data])
        #expect(life.status == 0, "\(life.stderr)")
        #expect(life.stdout.contains("Plays         47"), "\(life.stdout)")
        #expect(life.stdout.contains("20 plays in the last 12 months"), "\(life.stdout)")
        // Any spelling finds it.
        let bySpelling = try await vinylogue(["album", "ana", "the beatles", "ABBEY ROAD (2019 MIX)", "--data-dir", data])
        #expect(bySpelling.stdout.contains("20 plays in the last 12 months"), "\(bySpelling.stdout)")

        let forgotten = try await vinylogue(["rediscover", "ana", "--data-dir", data])
        #expect(forgotten.status == 0, "\(forgotten.stderr)")
        #expect(forgotten.stdout.contains("Vetiver — Tidewater"), "\(forgotten.stdout)")
        for played in ["Abbey Road", "Rumours", "White Crosses"] {
            #expect(!forgotten.stdout.contains(played), "\(played) was played this year: \(forgotten.stdout)")
        }
    }

    @Test func albumsListsWhatWasCountedAsOneAlbum() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        try Self.history(now: Date()).write(to: export, atomically: true, encoding: .utf8)
        let data = dir.url.appendingPathComponent("data").path
        _ = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", data])
        let run = try await vinylogue(["albums", "ana", "--spellings", "--data-dir", data])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("47 plays  The Beatles — Abbey Road"), "\(run.stdout)")
        #expect(lines.contains("27 plays  The Beatles — Abbey Road"), "\(run.stdout)")
        #expect(lines.contains("12 plays  The Beatles — Abbey Road (Remastered)"), "\(run.stdout)")
        #expect(lines.contains("8 plays  The Beatles — Abbey Road (2019 Mix)"), "\(run.stdout)")
        #expect(lines.contains("5 plays  Lower Dens — White Crosses [Limited Edition]"), "\(run.stdout)")
        // Tidewater has one spelling: not listed.
        #expect(!run.stdout.contains("Tidewater"), "\(run.stdout)")

        let json = try await vinylogue(["albums", "ana", "--json", "--data-dir", data])
        let albums = try JSONDecoder().decode([[String: JSONAny]].self, from: Data(json.stdout.utf8))
        #expect(albums.count == 4)
        let unknown = try await vinylogue(["albums", "nobody", "--data-dir", data])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("nobody"), "\(unknown.stderr)")
    }
}

/// `vinylogue year`: an archived person's year in review, as text and
/// JSON, in the time zone asked for; a year without listens and a year
/// that is no year each get a sentence.
@Suite struct YearCommandTests {
    @Test func aYearInReviewInTheTerminalAndAsJSON() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        var lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
        // 2021: Abbey Road in January (10 plays, half as its reissue),
        // Tidewater in June (4); 2020: Rumours (3), on 31 December at
        // 23:30 in New York, which is already 2021 in UTC.
        for n in 0..<5 { lines.append("\(1_610_000_000 + n * 600),x,The Beatles,,Abbey Road,,Come Together \(n),") }
        for n in 0..<5 { lines.append("\(1_610_100_000 + n * 600),x,The Beatles,,Abbey Road (Remastered),,Something \(n),") }
        for n in 0..<4 { lines.append("\(1_623_000_000 + n * 600),x,Vetiver,,Tidewater,,Track \(n),") }
        for n in 0..<3 { lines.append("\(1_609_475_400 + n * 60),x,Fleetwood Mac,,Rumours,,Dreams \(n),") }
        try (lines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let data = dir.url.appendingPathComponent("data").path
        let imported = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", data])
        #expect(imported.status == 0, "\(imported.stderr)")

        let run = try await vinylogue(["year", "ana", "2021", "--time-zone", "America/New_York", "--data-dir", data])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("14 plays · 2 albums · 2 artists · 14 tracks"), "\(run.stdout)")
        #expect(run.stdout.contains("   1. The Beatles — Abbey Road  (10 plays)"), "\(run.stdout)")
        #expect(run.stdout.contains("  January    The Beatles — Abbey Road  (10 plays of 10)"), "\(run.stdout)")
        #expect(run.stdout.contains("  June       Vetiver — Tidewater  (4 plays of 4)"), "\(run.stdout)")
        #expect(run.stdout.contains("Found this year"), "\(run.stdout)")
        #expect(!run.stdout.contains("Rumours"), "played in New York's 2020: \(run.stdout)")

        // In UTC, Rumours was played on 1 January 2021.
        let utc = try await vinylogue(["year", "ana", "2021", "--time-zone", "UTC", "--json", "--data-dir", data])
        #expect(utc.status == 0, "\(utc.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(utc.stdout.utf8)) as? [String: Any]
        let totals = json?["totals"] as? [String: Any]
        #expect(totals?["plays"] as? Int == 17, "\(utc.stdout)")
        #expect((json?["topAlbums"] as? [[String: Any]])?.first?["name"] as? String == "Abbey Road")
        #expect((json?["months"] as? [[String: Any]])?.count == 12)
        #expect((json?["hours"] as? [Int])?.reduce(0, +) == 17)
        #expect(["UTC", "GMT"].contains(json?["timeZone"] as? String ?? ""), "\(utc.stdout)")

        let empty = try await vinylogue(["year", "ana", "2015", "--time-zone", "America/New_York", "--data-dir", data])
        #expect(empty.status != 0)
        #expect(empty.stderr.contains("ana played nothing in 2015; their history runs from 2020 to 2021."), "\(empty.stderr)")
        let nonsense = try await vinylogue(["year", "ana", "0", "--data-dir", data])
        #expect(nonsense.status != 0)
        let one = try await vinylogue(["year", "ana", "2015", "--time-zone", "UTC", "--data-dir", data])
        #expect(one.stderr.contains("ana played nothing in 2015; their history is all in 2021."), "\(one.stderr)")
        #expect(nonsense.stderr.contains("“0” is not a year. Give four digits, as in 2019."), "\(nonsense.stderr)")
        // As the web app: four digits, nothing else.
        for bad in ["0999", "02024", "+2024"] {
            let refused = try await vinylogue(["year", "ana", bad, "--data-dir", data])
            #expect(refused.status != 0 && refused.stderr.contains("is not a year"), "\(bad): \(refused.stderr)")
        }
        let unknown = try await vinylogue(["year", "nobody", "2021", "--data-dir", data])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("nobody"), "\(unknown.stderr)")
    }
}

/// A person's album choice goes with their "Download everything" ZIP and
/// comes back with `vinylogue import` of it, charts counted again.
@Suite struct AlbumChoiceTravelTests {
    @Test func theChoiceTravelsInTheExportAndComesBackWithItsImport() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        try EditionsCommandTests.history(now: Date()).write(to: export, atomically: true, encoding: .utf8)
        let first = dir.url.appendingPathComponent("first"), second = dir.url.appendingPathComponent("second")
        _ = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", first.path])
        do {
            let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: first))
            #expect(try await store.chooseAlbumFolding(.asSpelled, of: try Username("ana"), at: Date()))
        }
        let zip = dir.url.appendingPathComponent("ana.zip")
        let exported = try await vinylogue(["export", "ana", "-o", zip.path, "--data-dir", first.path])
        #expect(exported.status == 0, "\(exported.stderr)")
        let archive = try Archive(url: zip, accessMode: .read)
        var member = Data()
        _ = try archive.extract(try #require(archive["vinylogue/albums.json"])) { member.append($0) }
        #expect(String(decoding: member, as: UTF8.self) == "{\"editions_as_one\":false}\n")

        let imported = try await vinylogue(["import", zip.path, "--user", "ana", "--data-dir", second.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("each spelling of an album counts as its own album for ana"), "\(imported.stdout)")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: second))
        #expect(try await store.albumFolding(of: try Username("ana")) == .asSpelled)
        let life = try await vinylogue(["album", "ana", "The Beatles", "Abbey Road", "--data-dir", second.path])
        #expect(life.stdout.contains("Plays         27"), "\(life.stdout)")
        // Counted here: nothing is left queued for a server to do.
        let jobs = try await SQLiteJobQueue(try ArchiveDatabase(directory: second)).jobs(of: .albumFolding, key: "ana")
        #expect(jobs.map(\.state) == [.done])
    }

    /// Choices about single albums travel in the same member, by the names
    /// the person saw, and are made again (and counted) on import.
    @Test func choicesAboutSingleAlbumsTravelInTheExportAndComeBack() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        try EditionsCommandTests.history(now: Date()).write(to: export, atomically: true, encoding: .utf8)
        let first = dir.url.appendingPathComponent("first"), second = dir.url.appendingPathComponent("second")
        _ = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", first.path])
        let ana = try Username("ana")
        do {
            let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: first))
            #expect(try await store.changeAlbums(.keepApart(artist: "The Beatles", album: "Abbey Road (2019 Mix)"), of: ana, at: Date()))
            #expect(try await store.changeAlbums(.join(artist: "Vetiver", album: "Tidewater", toArtist: "Lower Dens", toAlbum: "White Crosses"),
                                                 of: ana, at: Date().addingTimeInterval(1)))
        }
        let zip = dir.url.appendingPathComponent("ana.zip")
        #expect(try await vinylogue(["export", "ana", "-o", zip.path, "--data-dir", first.path]).status == 0)
        let archive = try Archive(url: zip, accessMode: .read)
        var member = Data()
        _ = try archive.extract(try #require(archive["vinylogue/albums.json"])) { member.append($0) }
        let text = String(decoding: member, as: UTF8.self)
        #expect(text.hasPrefix("{\"editions_as_one\":true,\"choices\":[{\"kind\":\"apart\",\"artist\":\"The Beatles\",\"album\":\"Abbey Road (2019 Mix)\""),
                "\(text)")
        #expect(text.contains("{\"kind\":\"join\",\"artist\":\"Vetiver\",\"album\":\"Tidewater\",\"same_as\":{\"artist\":\"Lower Dens\",\"album\":\"White Crosses\"}"))

        let imported = try await vinylogue(["import", zip.path, "--user", "ana", "--data-dir", second.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("2 albums were kept apart or joined for ana"), "\(imported.stdout)")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: second))
        #expect(try await store.albumChoices(of: ana).map(\.album) == ["Abbey Road (2019 Mix)", "Tidewater"])
        // Counted already: Abbey Road without its 2019 mix; Tidewater's plays in White Crosses.
        let abbey = try await vinylogue(["album", "ana", "The Beatles", "Abbey Road", "--data-dir", second.path])
        #expect(abbey.stdout.contains("Plays         39"), "\(abbey.stdout)")
        let crosses = try await vinylogue(["album", "ana", "Lower Dens", "White Crosses", "--data-dir", second.path])
        #expect(crosses.stdout.contains("Plays         59"), "\(crosses.stdout)")
        // Imported again: nothing more to make.
        let again = try await vinylogue(["import", zip.path, "--user", "ana", "--data-dir", second.path])
        #expect(!again.stdout.contains("kept apart or joined"), "\(again.stdout)")
    }
}

extension EditionsCommandTests {
    /// An export whose reissue's listens carry the album's release id only
    /// from its last play on: the import ties the two spellings and counts
    /// the weeks it touched before it ends (the command line runs no job
    /// runner), so `vinylogue album` finds one album with every play.
    @Test func anImportTiesSpellingsOfOneReleaseAndCountsThemBeforeItEnds() async throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export.csv")
        let release = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29", now = Int64(Date().timeIntervalSince1970)
        var lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
        for n in 0..<10 { lines.append("\(now - 700 * 86_400 + Int64(n) * 7 * 86_400),\"01 Jan 2020, 00:00\",Radiohead,,OK Computer,\(release),Airbag,") }
        for n in 0..<6 { lines.append("\(now - 200 * 86_400 + Int64(n) * 7 * 86_400),\"01 Jan 2020, 00:00\",Radiohead,,OK Computer OKNOTOK 1997 2017,,Lucky,") }
        lines.append("\(now - 30 * 86_400),\"01 Jan 2020, 00:00\",Radiohead,,OK Computer OKNOTOK 1997 2017,\(release),Lucky,")
        try (lines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let imported = try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", dir.url.path, "--batch-size", "5"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let album = try await vinylogue(["album", "ana", "Radiohead", "OK Computer", "--data-dir", dir.url.path])
        #expect(album.stdout.contains("Plays         17"), "\(album.stdout)")
        let albums = try await vinylogue(["albums", "ana", "--spellings", "--data-dir", dir.url.path])
        #expect(albums.stdout.contains("Radiohead — OK Computer OKNOTOK 1997 2017  (the same MusicBrainz release)\n"), "\(albums.stdout)")
        #expect(albums.stdout.contains("Radiohead — OK Computer\n"), "\(albums.stdout)")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: dir.url))
        #expect(try await store.albumWeeks(of: try Username("ana"), artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017")?.count == 17)
    }
}

/// Any JSON value, for counting what a command printed.
struct JSONAny: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// `vinylogue playlist`: this week two years ago as XSPF and JSPF, albums
/// in chart order, to standard output or a file; a week with nothing.
@Suite struct PlaylistCommandTests {
    @Test func thisWeekTwoYearsAgoAsAPlaylistFile() async throws {
        let dir = try TemporaryDirectory()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        let target = try #require(utc.date(byAdding: .year, value: -2, to: Date()))
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        var lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
        // Tidewater twice as played as Abbey Road (part of it as its reissue).
        for n in 0..<6 { lines.append("\(week.from + 3_600 + Int64(n) * 600),x,Vetiver,,Tidewater,,Tide \(n % 3),") }
        for n in 0..<2 { lines.append("\(week.from + 7_200 + Int64(n) * 600),x,The Beatles,,Abbey Road,,Something,") }
        lines.append("\(week.from + 9_000),x,The Beatles,,Abbey Road (Remastered),,Come Together,4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70")
        let export = dir.url.appendingPathComponent("export.csv")
        try (lines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let data = dir.url.appendingPathComponent("data").path
        #expect(try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", data]).status == 0)

        let xspf = try await vinylogue(["playlist", "ana", "--years-ago", "2", "--time-zone", "UTC", "--data-dir", data])
        #expect(xspf.status == 0, "\(xspf.stderr)")
        let order = ["<title>Vinylogue — this week, 2 years ago</title>", "<title>Tide 0</title>", "<title>Tide 1</title>",
                                             "<title>Tide 2</title>", "<title>Something</title>",
                                             "<identifier>https://musicbrainz.org/recording/4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70</identifier>",
                                             "<title>Come Together</title>", "<album>Abbey Road (Remastered)</album>"]
        let weekPlaces = order.map { xspf.stdout.range(of: $0)?.lowerBound }
        #expect(weekPlaces.allSatisfy { $0 != nil } && weekPlaces.compactMap { $0 } == weekPlaces.compactMap { $0 }.sorted(), "\(xspf.stdout)")
        #expect(xspf.stdout.components(separatedBy: "<track>").count == 6)

        let file = dir.url.appendingPathComponent("week.jspf").path
        let jspf = try await vinylogue(["playlist", "ana", "--years-ago", "2", "--to", "jspf", "-o", file, "--time-zone", "UTC", "--data-dir", data])
        #expect(jspf.status == 0, "\(jspf.stderr)")
        #expect(jspf.stderr.contains("Wrote 5 tracks of 2 albums to \(file)."), "\(jspf.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(((object?["playlist"] as? [String: Any])?["track"] as? [Any])?.count == 5)

        let none = try await vinylogue(["playlist", "ana", "--years-ago", "9", "--time-zone", "UTC", "--data-dir", data])
        #expect(none.status == 2 && none.stderr.contains("ana played nothing in the week of"), "\(none.stderr)")
        let stranger = try await vinylogue(["playlist", "nobody", "--data-dir", data])
        #expect(stranger.status == 2, "\(stranger.stderr)")

        // The year: its albums most played first, Abbey Road's spellings one album.
        let year = utc.component(.year, from: Date(timeIntervalSince1970: TimeInterval(week.from + 3_600)))
        let wholeYear = try await vinylogue(["playlist", "ana", "--year", String(year), "--time-zone", "UTC", "--data-dir", data])
        #expect(wholeYear.status == 0, "\(wholeYear.stderr)")
        let places = ["<title>Vinylogue — \(year)</title>", "<album>Tidewater</album>", "<album>Abbey Road</album>"]
            .map { wholeYear.stdout.range(of: $0)?.lowerBound }
        #expect(places.allSatisfy { $0 != nil } && places.compactMap { $0 } == places.compactMap { $0 }.sorted(), "\(wholeYear.stdout)")
        #expect(wholeYear.stdout.components(separatedBy: "<track>").count == 6)
        let emptyYear = try await vinylogue(["playlist", "ana", "--year", "1999", "--time-zone", "UTC", "--data-dir", data])
        #expect(emptyYear.status == 2 && emptyYear.stderr.contains("ana played no album in 1999."), "\(emptyYear.stderr)")
        // An album's life, asked by another spelling.
        let life = try await vinylogue(["playlist", "ana", "--artist", "the beatles", "--album", "ABBEY ROAD (REMASTERED)", "--to", "jspf",
                                        "--data-dir", data])
        #expect(life.status == 0, "\(life.stderr)")
        let lifeObject = try JSONSerialization.jsonObject(with: Data(life.stdout.utf8)) as? [String: Any]
        let lifeTracks = ((lifeObject?["playlist"] as? [String: Any])?["track"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
        #expect(lifeTracks == ["Something", "Come Together"])
        let never = try await vinylogue(["playlist", "ana", "--artist", "Low", "--album", "HEY WHAT", "--data-dir", data])
        #expect(never.status == 2 && never.stderr.contains("ana never played HEY WHAT by Low"), "\(never.stderr)")
        // -o a directory: a sentence; one track and one album in the singular.
        let intoDirectory = try await vinylogue(["playlist", "ana", "--years-ago", "2", "--time-zone", "UTC", "-o", dir.url.path, "--data-dir", data])
        #expect(intoDirectory.status != 0 && intoDirectory.stderr.contains("is a directory: give -o the path of a file"), "\(intoDirectory.stderr)")
        let one = dir.url.appendingPathComponent("one.xspf").path
        let single = try await vinylogue(["playlist", "ana", "--artist", "Vetiver", "--album", "Tidewater", "-o", one, "--data-dir", data])
        #expect(single.stderr.contains("Wrote 3 tracks of 1 album to"), "\(single.stderr)")
        for wrong in [["--year", "2020", "--years-ago", "2"], ["--album", "Tidewater"], ["--rediscover", "--year", "2020"], ["--year", "0"],
                      ["--years-ago", "1000"], ["--years-ago", "9223372036854775807"]] {
            let refused = try await vinylogue(["playlist", "ana", "--data-dir", data] + wrong)
            #expect(refused.status == 1 && refused.stderr.contains("--"), "\(wrong): \(refused.status) \(refused.stderr)")
        }
    }
}
