import Foundation
import GRDB
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// An import killed with SIGKILL at random moments, then run to the end,
/// leaves exactly what a clean import leaves.
/// The person the killed imports are for.
private let alice = try! Username("alice")
/// "Now" for the imports: 5 November 2026, after every made-up export.
private let testClock = WallClock.fixed(Date(timeIntervalSince1970: 1_794_000_000))

@Suite struct KillTests {
    /// Starts `vinylogue serve` on SQLite in `data` on a free port, with
    /// this process's environment and `extra` (nil removes a variable),
    /// its output discarded.
    static func serve(data: URL, _ extra: [String: String?] = [:]) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = try executable()
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", data.path]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        for (name, value) in extra { environment[name] = value }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The `vinylogue` executable built alongside this test bundle.
    static func executable(_ name: String = "vinylogue", filePath: String = #filePath) throws -> URL {
        let fm = FileManager.default
        var candidates: [URL] = []
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for base in [Bundle.main.bundleURL, testBinary.deletingLastPathComponent(), testBinary.deletingLastPathComponent().deletingLastPathComponent()] {
            candidates.append(base.appendingPathComponent(name))
        }
        // Else search the package's scratch directories.
        var root = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while root.path != "/", !fm.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root = root.deletingLastPathComponent()
        }
        let scratch = (try? fm.contentsOfDirectory(atPath: root.path)) ?? []
        for dir in scratch.filter({ $0.hasPrefix(".build") }).sorted() {
            candidates.append(root.appendingPathComponent(dir).appendingPathComponent("debug/\(name)"))
        }
        guard let found = candidates.first(where: { fm.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidates.map(\.path).joined(separator: ", ")])
        }
        return found
    }

    /// The environment variable that replays a run: set it to the seed a
    /// failed run printed.
    static let seedVariable = "VINYLOGUE_TEST_SEED"

    /// The seed for `test`'s random kill moments: `VINYLOGUE_TEST_SEED` when
    /// set, else the time. Printed either way, so a failure can be replayed
    /// (the same seed picks the same kill delays; the child's own pace still varies).
    static func seed(for test: String = #function) -> UInt64 {
        let given = ProcessInfo.processInfo.environment[seedVariable].flatMap { UInt64($0) }
        let seed = given ?? UInt64(Date().timeIntervalSince1970 * 1_000)
        print("KillTests.\(test): seed \(seed)\(given == nil ? "" : " (from \(seedVariable))"); replay with \(seedVariable)=\(seed)")
        return seed
    }

    /// Starts the built fake server `name` (`fake-lastfm`, `fake-listenbrainz`)
    /// and reads the address it prints on its first line; the caller stops it.
    static func fakeServer(_ name: String, _ arguments: [String]) throws -> (process: ChildProcess, url: String) {
        let server = ChildProcess()
        server.executableURL = try executable(name)
        server.arguments = arguments
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        var banner = Data()
        while !banner.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            banner += more
        }
        let line = String(decoding: banner, as: UTF8.self)
        guard let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }).map(String.init) else {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(name) printed no address: \(line)"])
        }
        return (server, url)
    }

    static func importProcess(_ binary: URL, file: String, dataDir: URL) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = binary
        process.arguments = ["import", file, "--user", "alice", "--data-dir", dataDir.path, "--batch-size", "200"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts a child with `launch`, waits until `count` grows (a
    /// transaction committed to the database in `directory`: each write to
    /// its log is an event to check on, never a poll) or for `delay` when
    /// given, then stops the child with SIGSTOP and returns it; the caller
    /// kills it. Launching and watching run on their own thread: other
    /// tests running in parallel can keep Swift's cooperative threads busy
    /// for long enough that a starved watcher lets the child finish unseen
    /// (seen in CI).
    /// How many scrobbles `user` has, read on the calling thread: for the
    /// watcher's own thread, which stops the child right after a commit.
    static func stored(_ store: SQLiteScrobbleStore, of user: Username) throws -> Int {
        try store.database.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM scrobble s JOIN archive_user u ON u.id = s.user_id WHERE u.name_key = ?",
                             arguments: [user.key]) ?? 0
        }
    }

    static func launchAndStop(_ launch: @escaping @Sendable () throws -> ChildProcess, afterNextCommit count: @escaping @Sendable () throws -> Int,
                              in directory: URL, delay: Duration? = nil) async throws -> ChildProcess {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<ChildProcess, any Error>) in
            let watcher = Thread {
                do {
                    let writes = try FileWrites(in: directory)
                    let before = try count()
                    let process = try launch()
                    if let delay {
                        usleep(UInt32(delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000))
                    } else {
                        let deadline = ContinuousClock.now + .seconds(10)
                        // Each wait ends at a write to the log, or after a
                        // moment to see whether the child is still running.
                        while (try? count()) == before, process.isRunning, ContinuousClock.now < deadline {
                            _ = writes.next(endingWith: "-wal", within: .milliseconds(100))
                        }
                    }
                    kill(process.processIdentifier, SIGSTOP)
                    done.resume(returning: process)
                } catch {
                    done.resume(throwing: error)
                }
            }
            watcher.start()
        }
    }

    @Test func killedImportsLoseAndDuplicateNothing() async throws {
        let binary = try Self.executable()
        let dir = try TemporaryDirectory()
        // A generated export, newest first like Last.fm's.
        let history = DemoHistory(seed: 21, start: 1_300_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: history.firstWeek.from + 520 * LastFMWeekCalendar.weekLength)
        let scrobbles = weeks.flatMap { history.scrobbles(in: $0) }
        var text = csvHeader + "\n"
        for s in scrobbles.reversed() { text += csvLine(s) + "\n" }
        let file = try dir.file("export.csv", text)

        let killed = dir.url.appendingPathComponent("killed")
        let store = try SQLiteScrobbleStore(database: ArchiveDatabase(directory: killed))
        let seed = Self.seed()
        var rng = SplitMix64(seed: seed)
        var interrupted = 0
        var counts: [Int] = []
        for round in 0..<7 {
            let launch: @Sendable () throws -> ChildProcess = { try Self.importProcess(binary, file: file, dataDir: killed) }
            let archived: @Sendable () throws -> Int = { try Self.stored(store, of: alice) }
            // Right after a batch commits (the first round always lands
            // mid-import: the archive is empty and every batch commits), and
            // at random moments.
            let process = round % 2 == 0
                ? try await Self.launchAndStop(launch, afterNextCommit: archived, in: killed)
                : try await Self.launchAndStop(launch, afterNextCommit: archived, in: killed, delay: .milliseconds(5 + Int(rng.next() % 300)))
            if process.isRunning { interrupted += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try await store.scrobbleCount(of: alice)
            // Committed batches survive each kill; later runs only add.
            #expect(count >= (counts.last ?? 0))
            #expect(count <= scrobbles.count)
            counts.append(count)
        }
        #expect(interrupted >= 1, "seed \(seed)")
        // At least one kill landed mid-import, with some batches committed.
        #expect(counts.contains { $0 > 0 && $0 < scrobbles.count }, "counts \(counts) of \(scrobbles.count), seed \(seed)")

        let finish = try Self.importProcess(binary, file: file, dataDir: killed)
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)

        let clean = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: dir.url.appendingPathComponent("clean")))
        let summary = try ScrobbleImporter(store: clean, clock: testClock).importFile(at: file, for: alice)
        // Every play is stored or counted as the same listen as another
        // (the generated history has a few repeats less than a minute apart).
        #expect(summary.imported + summary.duplicates == scrobbles.count)
        #expect(summary.duplicates < 10)
        #expect(try await store.scrobbleCount(of: alice) == summary.imported)
        #expect(try await store.scrobbles(of: alice, from: 0, to: .max) == clean.scrobbles(of: alice, from: 0, to: .max))
        let killedSource = ArchiveChartSource(store: store), cleanSource = ArchiveChartSource(store: clean)
        // The weekly rollups the killed imports left equal a count of the
        // rows themselves, for every week and kind.
        for week in weeks {
            // The week's rows, read once for its three charts.
            let rows = try await store.scrobbles(of: alice, from: week.from, to: week.to)
            for kind in [ChartKind.album, .artist, .track] {
                let chart = try await killedSource.chart(for: alice, kind: kind, week: week)
                #expect(chart == ScrobbleTally.chart(kind, user: alice, week: week, scrobbles: rows), "\(kind) chart of \(week), seed \(seed)")
                #expect(chart == (try await cleanSource.chart(for: alice, kind: kind, week: week)))
            }
        }
    }

    @Test func killedSyncsLoseAndDuplicateNothing() async throws {
        let dir = try TemporaryDirectory()
        // The fake's clock stops a year into rj's history: ~60 pages.
        let fakeNow: Int64 = 1_136_073_600 + 365 * 86_400
        let (server, url) = try Self.fakeServer("fake-lastfm", ["--port", "0", "--now", String(fakeNow)])
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }

        let binary = try Self.executable()
        let data = dir.url.appendingPathComponent("data")
        let store = try SQLiteScrobbleStore(database: ArchiveDatabase(directory: data))
        @Sendable func syncProcess() throws -> ChildProcess {
            let process = ChildProcess()
            process.executableURL = binary
            process.arguments = ["sync", "rj", "--data-dir", data.path]
            var environment = ProcessInfo.processInfo.environment
            environment["LASTFM_API_URL"] = url
            environment["LASTFM_API_KEY"] = "test-key"
            environment["LASTFM_REQUESTS_PER_SECOND"] = "50"
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let rj = try Username("rj")
        let seed = Self.seed()
        var rng = SplitMix64(seed: seed)
        var partial = 0
        var seen: [Int] = []
        for round in 0..<4 {
            // Kill right after a page commits (always in the first round), or a little later.
            let before = try await store.scrobbleCount(of: rj)
            let delay: Duration? = round == 0 || rng.next() % 2 == 0 ? nil : .milliseconds(50 + Int(rng.next() % 400))
            let process = try await Self.launchAndStop({ try syncProcess() }, afterNextCommit: { try KillTests.stored(store, of: rj) }, in: data, delay: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try await store.scrobbleCount(of: rj)
            seen.append(count)
            #expect(count >= before)
            if count > 0, try await ScrobbleSync(store: store, gateway: RecentTracksGateway { _, _, _, _, _ throws(SourceError) in
                throw .timeout
            }, clock: .system).pending(for: rj) != nil { partial += 1 }
        }
        #expect(partial >= 1, "archived after each kill: \(seen), seed \(seed)")
        let finish = try syncProcess()
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)

        let history = DemoHistory(seed: 7, start: 1_136_073_600)
        let expected = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: fakeNow + LastFMWeekCalendar.weekLength)
            .flatMap { history.scrobbles(in: $0) }
            .filter { $0.instant <= fakeNow }
        let archived = try await store.scrobbles(of: rj, from: 0, to: .max)
        #expect(archived.count == expected.count)
        #expect(Set(archived) == Set(expected))
    }
}

/// The same for `vinylogue sync lb:NAME` against the built `fake-listenbrainz`:
/// killed at random moments, then run to the end, it archives every listen
/// once.
@Suite struct ListenBrainzKillTests {
    @Test func killedListenBrainzSyncsLoseAndDuplicateNothing() async throws {
        let dir = try TemporaryDirectory()
        // The fake's clock stops two years into rob's history: ~10 windows of 1,000.
        let start: Int64 = 1_294_574_400
        let fakeNow = start + 2 * 365 * 86_400
        let (server, root) = try KillTests.fakeServer("fake-listenbrainz", ["--port", "0", "--now", String(fakeNow)])
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }

        let binary = try KillTests.executable()
        let data = dir.url.appendingPathComponent("data")
        let store = try SQLiteScrobbleStore(database: ArchiveDatabase(directory: data))
        @Sendable func syncProcess() throws -> ChildProcess {
            let process = ChildProcess()
            process.executableURL = binary
            process.arguments = ["sync", "lb:rob", "--data-dir", data.path]
            var environment = ProcessInfo.processInfo.environment
            environment["LISTENBRAINZ_API_URL"] = root
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let rob = try Username("lb:rob")
        let seed = KillTests.seed()
        var rng = SplitMix64(seed: seed)
        var partial = 0
        var seen: [Int] = []
        for round in 0..<3 {
            let before = try await store.scrobbleCount(of: rob)
            let delay: Duration? = round == 0 || rng.next() % 2 == 0 ? nil : .milliseconds(50 + Int(rng.next() % 400))
            let process = try await KillTests.launchAndStop({ try syncProcess() }, afterNextCommit: { try KillTests.stored(store, of: rob) }, in: data, delay: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try await store.scrobbleCount(of: rob)
            seen.append(count)
            #expect(count >= before)
            if count > 0, try await store.syncStart(of: rob).pending != nil { partial += 1 }
        }
        #expect(partial >= 1, "archived after each kill: \(seen), seed \(seed)")
        let finish = try syncProcess()
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)

        let history = DemoHistory(seed: 11, start: start)
        let expected = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: fakeNow + LastFMWeekCalendar.weekLength)
            .flatMap { history.scrobbles(in: $0) }
            .filter { $0.instant <= fakeNow }
            .map { Scrobble(instant: $0.instant, artist: $0.artist, album: $0.album, track: $0.track, albumMBID: $0.albumMBID) }
        let archived = try await store.scrobbles(of: rob, from: 0, to: .max)
        #expect(archived.count == expected.count)
        #expect(Set(archived) == Set(expected))
    }
}
