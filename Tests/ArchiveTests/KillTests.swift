import Foundation
import Testing
import VinylogueCore
@testable import Archive

/// An import killed with SIGKILL at random moments, then run to the end,
/// leaves exactly what a clean import leaves.
@Suite struct KillTests {
    /// The `vinylogue` executable built alongside this test bundle.
    static func executable(filePath: String = #filePath) throws -> URL {
        let fm = FileManager.default
        var candidates: [URL] = []
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for base in [Bundle.main.bundleURL, testBinary.deletingLastPathComponent(), testBinary.deletingLastPathComponent().deletingLastPathComponent()] {
            candidates.append(base.appendingPathComponent("vinylogue"))
        }
        // Else search the package's scratch directories.
        var root = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while root.path != "/", !fm.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root = root.deletingLastPathComponent()
        }
        let scratch = (try? fm.contentsOfDirectory(atPath: root.path)) ?? []
        for dir in scratch.filter({ $0.hasPrefix(".build") }).sorted() {
            candidates.append(root.appendingPathComponent(dir).appendingPathComponent("debug/vinylogue"))
        }
        guard let found = candidates.first(where: { fm.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidates.map(\.path).joined(separator: ", ")])
        }
        return found
    }

    static func importProcess(_ binary: URL, file: String, dataDir: URL) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["import", file, "--user", "alice", "--data-dir", dataDir.path, "--batch-size", "500"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
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
        let store = try ScrobbleStore(database: ArchiveDatabase(directory: killed))
        var rng = SplitMix64(seed: UInt64(Date().timeIntervalSince1970))
        var interrupted = 0
        var counts: [Int] = []
        for round in 0..<7 {
            let process = try Self.importProcess(binary, file: file, dataDir: killed)
            if round < 4 {
                // At a random moment...
                try await Task.sleep(for: .milliseconds(20 + Int(rng.next() % 400)))
            } else {
                // ...and right after a new batch has committed.
                let before = try store.count(for: alice)
                let deadline = ContinuousClock.now + .seconds(10)
                while try store.count(for: alice) == before, process.isRunning, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(2))
                }
                try await Task.sleep(for: .milliseconds(Int(rng.next() % 20)))
            }
            if process.isRunning { interrupted += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try store.count(for: alice)
            // Committed batches survive each kill; later runs only add.
            #expect(count >= (counts.last ?? 0))
            #expect(count <= scrobbles.count)
            counts.append(count)
        }
        #expect(interrupted >= 1)
        // At least one kill landed mid-import, with some batches committed.
        #expect(counts.contains { $0 > 0 && $0 < scrobbles.count })

        let finish = try Self.importProcess(binary, file: file, dataDir: killed)
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)

        let clean = try dir.store("clean")
        let summary = try ScrobbleImporter(store: clean).importFile(at: file, for: alice)
        #expect(summary.imported == scrobbles.count)
        #expect(try store.count(for: alice) == scrobbles.count)
        #expect(try store.scrobbles(for: alice, from: 0, to: .max) == clean.scrobbles(for: alice, from: 0, to: .max))
        let killedSource = ArchiveChartSource(store: store), cleanSource = ArchiveChartSource(store: clean)
        for week in weeks {
            #expect(try await killedSource.chart(for: alice, kind: .album, week: week)
                == cleanSource.chart(for: alice, kind: .album, week: week))
        }
    }
}
