import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// A server importing an uploaded export, killed with SIGKILL mid-import
/// three times and started again each time: the job queue's runner takes
/// the job over from the dead process, skips the batches the earlier runs
/// stored, and the archive ends holding what a clean import holds, the
/// upload's summary counting every play as imported, none as a duplicate
/// of its own earlier rows.
@Suite struct UploadKillTests {
    @Test func anUploadsImportKilledThreeTimesResumesAndStoresEverythingOnce() async throws {
        let dir = try TemporaryDirectory()
        let person = try Username("alice")
        let history = DemoHistory(seed: 33, start: 1_300_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: history.firstWeek.from + 520 * LastFMWeekCalendar.weekLength)
        let scrobbles = weeks.flatMap { history.scrobbles(in: $0) }
        var text = csvHeader + "\n"
        for s in scrobbles.reversed() { text += csvLine(s) + "\n" }
        let export = try dir.file("export.csv", text)

        let data = dir.url.appendingPathComponent("data")
        let database = try ArchiveDatabase(directory: data)
        let store = SQLiteScrobbleStore(database: database)
        let uploads = SQLiteImportJobStore(database)
        // Waiting as Settings leaves an upload: the file in the data
        // directory, the upload and its job queued for this machine.
        let waiting = data.appendingPathComponent("uploads", isDirectory: true)
        try FileManager.default.createDirectory(at: waiting, withIntermediateDirectories: true)
        let file = waiting.appendingPathComponent("upload.csv")
        try FileManager.default.copyItem(atPath: export, toPath: file.path)
        let upload = try await uploads.queue(owner: .household, user: person, fileName: "export.csv", path: file.path,
                                             bytes: Int64(text.utf8.count), machine: JobHolder.machine(), at: Date())

        @Sendable func serve() throws -> ChildProcess { try KillTests.serve(data: data) }
        var seen: [Int] = []
        for _ in 0..<3 {
            let before = try await store.scrobbleCount(of: person)
            let process = try await KillTests.launchAndStop({ try serve() }, afterNextCommit: { try KillTests.stored(store, of: person) }, in: data)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try await store.scrobbleCount(of: person)
            seen.append(count)
            #expect(count >= before, "archived after each kill: \(seen)")
        }
        #expect(seen.contains { $0 > 0 && $0 < scrobbles.count }, "a kill landed mid-import: \(seen) of \(scrobbles.count)")

        // Started once more, the server finishes the import.
        let last = try serve()
        defer { kill(last.processIdentifier, SIGKILL); last.waitUntilExit() }
        let deadline = ContinuousClock.now + .seconds(10)
        while try await uploads.upload(upload.id)?.state != .done, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let done = try #require(try await uploads.upload(upload.id))
        #expect(done.state == .done, "\(done), archived after each kill: \(seen)")

        let clean = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: dir.url.appendingPathComponent("clean")))
        let reference = try ScrobbleImporter(store: clean, clock: .fixed(Date(timeIntervalSince1970: 1_794_000_000)))
            .importFile(at: export, for: person)
        #expect(try await store.scrobbles(of: person, from: 0, to: .max) == clean.scrobbles(of: person, from: 0, to: .max))
        let counts = "Imported \(grouped(reference.imported)) scrobbles for alice; \(grouped(reference.duplicates)) duplicates skipped"
        #expect(done.summary?.contains(counts) == true, "\(done.summary ?? "no summary"), archived after each kill: \(seen)")
        #expect(!FileManager.default.fileExists(atPath: file.path), "the upload's file is deleted once read")
    }
}
