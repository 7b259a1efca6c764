import ArgumentParser
import SQLiteStore
import Stores
import Sync
import Artwork
import Dispatch
import Foundation
import Synchronization
import VinylogueApp
import VinylogueCore

/// `vinylogue art …`: album art kept for offline use.
struct ArtCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "art",
        abstract: "Album art for archived users.",
        subcommands: [ArtFetchCommand.self])
}

/// `vinylogue art fetch USER`: resolves the cover of every album in a
/// user's archive and keeps the images, so their pages show covers with
/// Last.fm unreachable.
struct ArtFetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Find and keep the cover of every album in a user's archive, so their pages show covers offline.",
        discussion: """
            Albums go most played first, at most LASTFM_REQUESTS_PER_SECOND requests a \
            second (the fleet's shared budget with --database). Each answer is remembered \
            as it arrives, "no cover" included, and each image is kept in the data \
            directory outside the art cache's size limit. Stop it with Ctrl-C at any time; \
            running it again carries on where it stopped and asks Last.fm nothing twice.
            """)

    @Argument(help: "The archived user (as imported or synced).")
    var user: String

    @Option(name: .customLong("data-dir"), help: "The data directory the images are kept in (default: $XDG_DATA_HOME/vinylogue); also the archive's unless --database is given.")
    var dataDir: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL archive instead of --data-dir, as postgres://user:password@host:5432/name (default: $DATABASE_URL).")
    var databaseURL: String?

    @Flag(name: .customLong("ask-again-without-cover"),
          help: "Ask Last.fm again about albums it had no cover for last time (art is added over time).")
    var askAgainWithoutCover = false

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await ServeCommand.composing(.withDatabase(databaseURL)) { composition in
            let directory = composition.dataDirectory(dataDir)
            // A mistyped --data-dir must not leave an empty database behind.
            guard composition.configuration.databaseURL != nil || ArchiveDatabase.exists(in: directory) else {
                throw CommandFailure("There is no archive in \(directory.path), so there are no covers to fetch. Give the --data-dir "
                    + "you imported or synced into, or archive \(username) first with `vinylogue sync \(username)` or "
                    + "`vinylogue import FILE --user \(username)`.", exitCode: .noData)
            }
            let fetch: ArchiveCoverFetch
            do {
                fetch = try await composition.archiveCoverFetch(dataDir: dataDir)
            } catch let error as DatabaseUnavailable {
                throw CommandFailure("\(error) Check --database (or DATABASE_URL) and that the PostgreSQL server is running and accepts this user.",
                                     exitCode: .configuration)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            let bar = SyncCommand.BarBox(composition.progressBar())
            let running = Task {
                try await fetch.run(for: username, askAgainWithoutCover: askAgainWithoutCover) { p in
                    await bar.update(Double(p.done) / Double(max(1, p.total)),
                                     "\(grouped(p.done))/\(grouped(p.total)) albums, \(grouped(p.found)) covers, "
                                        + "\(grouped(p.noCover)) without, \(grouped(p.failed)) failed")
                }
            }
            let interruption = Interruption { running.cancel() }
            defer { interruption.stop() }
            let summary: ArchiveCoverFetch.Summary
            do {
                summary = try await running.value
            } catch let error as SourceError {
                await bar.finish()
                if case .notArchived = error {
                    throw CommandFailure("Nothing with an album name is archived for “\(username)” here, so there are no covers to fetch. "
                        + "Run `vinylogue sync \(username)` or `vinylogue import FILE --user \(username)` first"
                        + (databaseURL == nil ? " (with the same --data-dir)." : " (with the same --database)."),
                        exitCode: .noData)
                }
                throw CommandFailure(error.forTerminal + " Nothing fetched so far is lost: run the same command again afterwards.",
                                     exitCode: ExitStatus(error))
            }
            await bar.finish()
            let kept = await fetch.artwork.keptTotals()
            let keptDirectory = directory.appendingPathComponent(ArtworkStore.keptDirectoryName)
            Terminal.standardOutput.write(Self.report(summary, user: username, kept: kept, directory: keptDirectory.path))
            if let gaveUp = summary.gaveUp {
                throw CommandFailure("Stopped after \(grouped(summary.failures.count)) albums failed: \(gaveUp.forTerminal) "
                    + "Everything fetched so far is kept; run the same command again to carry on.", exitCode: ExitStatus(gaveUp))
            }
            if summary.interrupted {
                throw CommandFailure("Interrupted. Everything fetched so far is kept; run the same command again to carry on.",
                                     exitCode: .interrupted)
            }
            if !summary.failures.isEmpty {
                throw CommandFailure("\(grouped(summary.failures.count)) \(summary.failures.count == 1 ? "album" : "albums") could not be "
                    + "fetched (listed above). Run the same command again later to try them again.", exitCode: .upstream)
            }
        }
    }

    static func report(_ summary: ArchiveCoverFetch.Summary, user: Username, kept: (images: Int, bytes: Int64), directory: String) -> String {
        var out = "Covers for \(user): \(grouped(summary.albums)) albums in the archive.\n"
        out += "  \(grouped(summary.found)) covers found, \(grouped(summary.noCover)) without a cover on Last.fm, "
            + "\(grouped(summary.alreadyDone)) already done"
        if summary.keptImages > 0 { out += "; \(grouped(summary.keptImages)) images downloaded" }
        out += ".\n"
        if summary.notAttempted > 0 { out += "  \(grouped(summary.notAttempted)) albums not tried yet.\n" }
        if !summary.failures.isEmpty {
            out += "  \(grouped(summary.failures.count)) failed:\n"
            let byReason = Dictionary(grouping: summary.failures, by: \.reason).sorted { $0.value.count > $1.value.count }
            for (reason, failures) in byReason {
                let names = failures.prefix(5).map { "\($0.artist) – \($0.name)" }.joined(separator: "; ")
                let more = failures.count > 5 ? " and \(grouped(failures.count - 5)) more" : ""
                out += "    \(grouped(failures.count)) × \(reason) (\(names)\(more))\n"
            }
        }
        out += "Kept for offline use: \(grouped(kept.images)) images, \(Self.size(kept.bytes)) in \(directory).\n"
        return out
    }
}

extension ArtFetchCommand {
    /// "840 KB", "48.3 MB".
    static func size(_ bytes: Int64) -> String {
        bytes < 1_048_576 ? "\(grouped(Int((bytes + 1023) / 1024))) KB" : String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }
}

/// Ctrl-C (SIGINT) while a command runs: the first cancels its work, which
/// then stops and reports what it did; a second ends the process at once.
final class Interruption {
    private final class Presses: Sendable {
        let count = Atomic<Int>(0)
    }

    private let source: any DispatchSourceSignal

    init(_ onInterrupt: @escaping @Sendable () -> Void) {
        // Ignored as a signal, so that the dispatch source alone sees it.
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let presses = Presses()
        source.setEventHandler {
            if presses.count.add(1, ordering: .relaxed).newValue > 1 { exit(ExitStatus.interrupted.rawValue) }
            onInterrupt()
        }
        source.resume()
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
