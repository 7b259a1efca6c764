import VinylogueApp
import ArgumentParser
import Archive
import Foundation
import VinylogueCore

/// `vinylogue import FILE --user NAME`: adds an export file to the archive.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a listening export into the local archive.",
        discussion: """
            Recognises Last.fm CSV exports (with or without the uts header), \
            ListenBrainz listens (JSON array or JSON lines) and Spotify extended \
            streaming history (Streaming_History_Audio_*.json, endsong_*.json). \
            Importing the same file again adds nothing.
            """)

    @Argument(help: "The export file.")
    var file: String

    @Option(help: "The Last.fm username the scrobbles belong to.")
    var user: String

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Option(name: .customLong("batch-size"), help: "Scrobbles per transaction.")
    var batchSize = 10_000

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw CommandFailure("“\(file)” does not exist. Check the path of the export file.", exitCode: .usage)
        }
        guard !isDirectory.boolValue else {
            throw CommandFailure("“\(file)” is a directory, not an export file. Give the path of the file itself, "
                + "for example “\(URL(fileURLWithPath: file).appendingPathComponent("scrobbles.csv").path)”.", exitCode: .usage)
        }
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw CommandFailure("“\(file)” may not be read by this user. Check its permissions (`ls -l`), or copy it somewhere readable.",
                                 exitCode: .usage)
        }
        try await Composition.with { composition in
            let summary: ImportSummary
            do {
                let store = try composition.openArchive(dataDir: dataDir)
                let importer = ScrobbleImporter(store: store, clock: composition.clock, batchSize: batchSize)
                let progressBar = composition.progressBar(), file = self.file
                // The import blocks (file reads, waits for its writer): on a
                // thread of its own, never on Swift's cooperative pool.
                summary = try await DedicatedThread.run(named: "vinylogue.import") {
                    var bar = progressBar
                    defer { bar.finish() }
                    return try importer.importFile(at: file, for: username) { p in
                        let fraction = p.totalBytes > 0 ? Double(p.bytesRead) / Double(p.totalBytes) : 1
                        bar.update(fraction, "\(grouped(p.imported)) imported, \(grouped(p.duplicates)) duplicates, \(grouped(p.rejected)) rejected")
                    }
                }
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            Terminal.standardOutput.write(Self.report(summary, user: username))
            if summary.imported + summary.duplicates == 0, summary.rejectedCount > 0 {
                throw CommandFailure("No scrobbles could be read from “\(file)”. Check that it is a Last.fm CSV export, "
                    + "a ListenBrainz listens export or a Spotify extended streaming history file.", exitCode: .noData)
            }
        }
    }

    static func report(_ summary: ImportSummary, user: Username) -> String {
        var out = "Format: \(summary.format?.rawValue ?? "not recognised")\n"
        out += "Imported \(grouped(summary.imported)) scrobbles for \(user); \(grouped(summary.duplicates)) duplicates skipped"
        out += "; \(grouped(summary.rejectedCount)) lines rejected.\n"
        for (reason, count) in summary.skipped.sorted(by: { $0.key < $1.key }) {
            out += "Skipped \(grouped(count)) \(reason).\n"
        }
        let shown = summary.rejected.prefix(50)
        for rejection in shown { out += "  rejected \(rejection)\n" }
        if summary.rejectedCount > shown.count { out += "  … and \(grouped(summary.rejectedCount - shown.count)) more rejected lines.\n" }
        return out
    }
}

/// `vinylogue sync USER`: downloads new scrobbles from Last.fm.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Download a user's new scrobbles from Last.fm into the local archive (resumes after an interruption).")

    @Argument(help: "A Last.fm username.")
    var user: String

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await Composition.with { composition in
            do {
                let store = try composition.openArchive(dataDir: dataDir)
                let sync = ScrobbleSync(store: store, gateway: composition.recentTracksGateway, clock: composition.clock)
                // Checked first: an unknown name fails with "not found" before
                // anything is stored, and a new archive takes Last.fm's spelling.
                let username = try await composition.lastFM.user(username).name
                if let pending = try sync.pending(for: username) {
                    Terminal.standardError.write("Resuming the interrupted sync at page \(pending.nextPage) of \(pending.totalPages).\n")
                }
                let bar = BarBox(composition.progressBar())
                let summary = try await sync.sync(username) { p in
                    await bar.update(Double(p.pagesDone) / Double(max(1, p.totalPages)),
                                     "page \(p.pagesDone)/\(p.totalPages), \(grouped(p.imported)) new scrobbles")
                }
                await bar.finish()
                Terminal.standardOutput.write("Synced \(username): \(grouped(summary.imported)) new scrobbles from \(summary.pages) pages"
                    + (summary.duplicates > 0 ? " (\(grouped(summary.duplicates)) already archived)" : "") + ".\n")
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
        }
    }

    /// The bar, shared with the sync's progress callback.
    actor BarBox {
        var bar: ProgressBar
        init(_ bar: ProgressBar) { self.bar = bar }
        func update(_ fraction: Double, _ text: String) { bar.update(fraction, text) }
        func finish() { bar.finish() }
    }
}
