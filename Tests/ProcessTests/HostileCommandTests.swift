import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The `vinylogue` binary facing a damaged archive, the wrong kind of path
/// and several copies of itself opening one new data directory.
@Suite struct HostileCommandTests {
    struct Outcome {
        let status: Int32
        let output: String
    }

    /// Starts `vinylogue arguments` with stdout and stderr in one file.
    static func start(_ arguments: [String], in dir: URL) throws -> (ChildProcess, URL) {
        let process = ChildProcess()
        process.executableURL = try KillTests.executable()
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": dir.path, "TZ": "UTC", "NO_COLOR": "1"]
        let log = dir.appendingPathComponent("out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, log)
    }

    static func finish(_ started: (ChildProcess, URL)) throws -> Outcome {
        started.0.waitUntilExit()
        return Outcome(status: started.0.terminationStatus, output: try String(contentsOf: started.1, encoding: .utf8))
    }

    static func run(_ arguments: [String], in dir: URL) throws -> Outcome {
        try finish(try start(arguments, in: dir))
    }

    @Test func chartAndHistoryStandADamagedArchive() async throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: data))
        let bomb = try Username("bomb")
        // `history` looks at this week in earlier years, as the binary's own clock sees it.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        let yearAgo = Int64(try #require(utc.date(byAdding: .year, value: -1, to: Date())).timeIntervalSince1970)
        try await store.store([Scrobble(instant: 1_594_000_000, artist: "Local Artist", album: "Offline Album", track: "T"),
                               Scrobble(instant: yearAgo, artist: "Last Year", album: "A Year Ago", track: "T"),
                               Scrobble(instant: .max, artist: "A", album: "B", track: "D"),
                               Scrobble(instant: 1_000_000_000_000_000_000, artist: "A", album: "B", track: "D")],
                              of: bomb, origin: .lastFMExport)
        let chart = try Self.run(["chart", "bomb", "--week", "2020-07-06", "--source", "archive", "--data-dir", data.path, "--json"], in: dir.url)
        #expect(chart.status == 0, "\(chart.output)")
        #expect(chart.output.contains("Offline Album"))
        let history = try Self.run(["history", "bomb", "--data-dir", data.path], in: dir.url)
        #expect(history.status == 0, "\(history.output)")
        #expect(history.output.contains("A Year Ago"))
        // Reading it changed nothing stored.
        let after = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: data))
        #expect(try await after.scrobbleCount(of: bomb) == 4)
        #expect(try await after.scrobbles(of: bomb, from: 1_594_000_000, to: 1_594_000_001).map(\.album) == ["Offline Album"])
    }

    /// What a data directory holds for `user` after a command: nothing at
    /// all when the command never made the database.
    static func stored(for user: String, in data: URL) async throws -> Int {
        guard ArchiveDatabase.exists(in: data) else { return 0 }
        return try await SQLiteScrobbleStore(database: try ArchiveDatabase(directory: data)).scrobbleCount(of: try Username(user))
    }

    @Test func importingAnEmptyDirectorySaysItHoldsNoExports() async throws {
        let dir = try TemporaryDirectory()
        let empty = dir.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let run = try Self.run(["import", empty.path, "--user", "alice", "--data-dir", dir.url.appendingPathComponent("data").path], in: dir.url)
        #expect(run.status == 1)
        #expect(run.output.contains("is a directory with no export files in it"))
        #expect(run.output.contains("Give the path of an export file, a ZIP archive"))
        #expect(try await Self.stored(for: "alice", in: dir.url.appendingPathComponent("data")) == 0)
    }

    @Test func importingABombReportsTheLineAndStoresNothingAbsurd() async throws {
        let dir = try TemporaryDirectory()
        let file = try dir.file("bomb.csv", csvHeader + "\n9223372036854775807,x,A,,B,,D,\n")
        let data = dir.url.appendingPathComponent("data")
        let run = try Self.run(["import", file, "--user", "bomb", "--data-dir", data.path], in: dir.url)
        #expect(run.status == 2)
        #expect(run.output.contains("line 2: time 9223372036854775807 is more than a day in the future"))
        #expect(try await Self.stored(for: "bomb", in: data) == 0)
    }

    /// Three imports started at once into a directory that does not exist
    /// yet; before migrations took a lock, about one round in ten failed
    /// with "table archive_user already exists".
    @Test func simultaneousImportsIntoANewDirectoryAllSucceed() async throws {
        let dir = try TemporaryDirectory()
        let file = try dir.file("export.csv", csvHeader + "\n1580495100,x,Radiohead,,OK Computer,,Airbag,\n")
        var failures: [String] = []
        for round in 0..<12 {
            let data = dir.url.appendingPathComponent("data-\(round)")
            let started = try (0..<3).map { _ in try Self.start(["import", file, "--user", "alice", "--data-dir", data.path], in: dir.url) }
            for outcome in try started.map(Self.finish) where outcome.status != 0 {
                failures.append("round \(round): \(outcome.output)")
            }
            // Three imports of one listen keep it once.
            let kept = try await Self.stored(for: "alice", in: data)
            if kept != 1 { failures.append("round \(round): \(kept) listens kept, not 1") }
        }
        #expect(failures.isEmpty, "\(failures.count) failed: \(failures.prefix(2))")
    }
}
