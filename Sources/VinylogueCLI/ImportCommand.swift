import VinylogueApp
import ArgumentParser
import SQLiteStore
import Stores
import Sync
import Imports
import Foundation
import ListenBrainz
import VinylogueCore
import Workers

/// `vinylogue import FILE --user NAME`: adds an export file, a ZIP archive
/// of exports or a directory of them to the archive.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a listening export (a file, a ZIP archive as downloaded, or a directory) into the local archive.",
        discussion: """
            Recognises Last.fm CSV and JSON exports, ListenBrainz exports (the ZIP as \
            downloaded, or its JSON / JSON lines files), Spotify extended streaming history \
            and account data (my_spotify_data.zip, or its JSON files), Rockbox \
            .scrobbler.log files and Maloja exports, each from its content. A ZIP archive \
            or a directory is read member by member; members that are not listening \
            history are skipped and named. The same play from two sources (less than a \
            minute apart, same artist and track) is stored once; importing the same file \
            again adds nothing.
            """)

    @Argument(help: "The export file, ZIP archive or directory.")
    var file: String

    @Option(help: "The Last.fm username the scrobbles belong to.")
    var user: String

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL archive instead of --data-dir, as postgres://user:password@host:5432/name (default: $DATABASE_URL).")
    var databaseURL: String?

    @Option(help: ArgumentHelp("The export's format, when it is not recognised from its content: \(ExportFormat.names.joined(separator: ", ")).",
                               valueName: "name"))
    var format: String?

    @Option(name: .customLong("player-time-zone"),
            help: ArgumentHelp("The zone a portable player's clock was set to, for a .scrobbler.log marked #TZ/UNKNOWN "
                + "(default: its times are kept as written, as UTC).", valueName: "zone"))
    var playerTimeZone: String?

    @Option(name: .customLong("batch-size"), help: "Scrobbles per transaction.")
    var batchSize = 10_000

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        var choice: FormatChoice?
        if let format {
            guard let chosen = FormatChoice(format) else {
                throw CommandFailure("“\(format)” is not a format Vinylogue knows. Use one of: \(ExportFormat.names.joined(separator: ", ")).",
                                     exitCode: .usage)
            }
            choice = chosen
        }
        var playerZone: TimeZone?
        if let playerTimeZone {
            guard let zone = TimeZone(identifier: playerTimeZone) else {
                throw CommandFailure("“\(playerTimeZone)” is not a time zone. Use a name like Europe/Berlin or America/New_York.",
                                     exitCode: .usage)
            }
            playerZone = zone
        }
        guard FileManager.default.fileExists(atPath: file) else {
            throw CommandFailure("“\(file)” does not exist. Check the path of the export file.", exitCode: .usage)
        }
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw CommandFailure("“\(file)” may not be read by this user. Check its permissions (`ls -l`), or copy it somewhere readable.",
                                 exitCode: .usage)
        }
        try await ServeCommand.composing(.withDatabase(databaseURL)) { composition in
            let summary: ImportSummary
            do {
                let store = try await composition.openArchiveForCommand(dataDir: dataDir)
                let importer = ScrobbleImporter(store: store, clock: composition.clock, batchSize: batchSize, format: choice,
                                                playerTimeZone: playerZone)
                let progressBar = composition.progressBar(), file = self.file
                // The import blocks (file reads, waits for its writer): on a
                // thread of its own, never on Swift's cooperative pool.
                summary = try await DedicatedThread.run(named: "vinylogue.import") {
                    var bar = progressBar
                    defer { bar.finish() }
                    return try importer.importFile(at: file, for: username) { p in
                        let fraction = p.totalBytes > 0 ? min(1, Double(p.bytesRead) / Double(p.totalBytes)) : 1
                        bar.update(fraction, (p.member.map { "\($0): " } ?? "")
                            + "\(grouped(p.imported)) imported, \(grouped(p.duplicates)) duplicates, \(grouped(p.rejected)) rejected")
                    }
                }
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            if !summary.isCollection, !summary.unrecognised.isEmpty {
                throw CommandFailure("“\(file)” is not an export Vinylogue recognises, so nothing was imported. It reads "
                    + "\(ExportFormat.known). If the file is one of these, name its format with --format "
                    + "(\(ExportFormat.names.joined(separator: ", "))).", exitCode: .usage)
            }
            Terminal.standardOutput.write(Self.report(summary, user: username))
            if summary.albumFolding != nil || !summary.albumChoices.isEmpty {
                do {
                    let brought = try await composition.bringBackAlbumFolding(summary.albumFolding, choices: summary.albumChoices,
                                                                              of: username, dataDir: dataDir)
                    if brought.switched, let folding = summary.albumFolding {
                        Terminal.standardOutput.write(folding.foldsEditions
                            ? "As the export says, editions of an album count as one album for \(username); their charts are counted again.\n"
                            : "As the export says, each spelling of an album counts as its own album for \(username); their charts are counted again.\n")
                    }
                    if brought.choicesMade > 0 {
                        Terminal.standardOutput.write("As the export says, \(brought.choicesMade == 1 ? "one album was" : "\(brought.choicesMade) albums were") "
                            + "kept apart or joined for \(username); their charts are counted again.\n")
                    }
                } catch let error as SourceError {
                    throw CommandFailure(error)
                }
            }
            do {
                // Choices brought back, and albums the listens tied by release.
                try await composition.countAlbumsNow(of: username, dataDir: dataDir)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            if summary.isCollection, summary.imported + summary.duplicates == 0, !summary.refused.isEmpty {
                throw CommandFailure("Nothing was imported from “\(file)”: \(summary.refused.count == 1 ? "a file in it is" : "files in it are") "
                    + "damaged or too large (listed above). Download the export again; if it keeps happening, unpack it and import "
                    + "the files that are left.", exitCode: .noData)
            }
            if summary.isCollection, summary.imported + summary.duplicates == 0, summary.rejectedCount == 0 {
                throw CommandFailure("No listening history was found in “\(file)”, so nothing was imported. Vinylogue reads "
                    + "\(ExportFormat.known); check that this is the export you meant (for ListenBrainz, the ZIP from "
                    + "“Export data”; for Spotify, my_spotify_data.zip).", exitCode: .noData)
            }
            if summary.imported + summary.duplicates == 0, summary.rejectedCount > 0 {
                throw CommandFailure("No scrobbles could be read from “\(file)”: every line was rejected (listed above). Check that "
                    + "it is a complete export, or name its format with --format.", exitCode: .noData)
            }
        }
    }

    static func report(_ summary: ImportSummary, user: Username) -> String {
        summary.report(for: user, printable: Terminal.printable)
    }
}

/// `vinylogue sync USER`: downloads new scrobbles from Last.fm, or a
/// ListenBrainz user's new listens (`sync lb:NAME`).
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Download a user's new scrobbles from Last.fm (or lb:NAME's listens from ListenBrainz) into the local archive (resumes after an interruption).")

    @Argument(help: "A Last.fm username, or lb:NAME for a ListenBrainz user.")
    var user: String

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL archive instead of --data-dir, as postgres://user:password@host:5432/name (default: $DATABASE_URL).")
    var databaseURL: String?

    func run() async throws {
        let username: Username
        do { username = try Username(user) } catch {
            throw CommandFailure("“\(user)” is not a valid username: \(error.description)", exitCode: .usage)
        }
        try await ServeCommand.composing(.withDatabase(databaseURL)) { composition in
            do {
                let stores = try await composition.openStoresForCommand(dataDir: dataDir)
                let store = stores.archive
                let sync = composition.sync(of: username, into: store)
                let fromListenBrainz = username.service == .listenBrainz
                // Checked first: an unknown name fails with "not found" before
                // anything is stored, and a new archive takes the service's spelling.
                let username = try await (fromListenBrainz ? composition.listenBrainz.user(username) : composition.lastFM.user(username)).name
                // The same job a server's copy runs as: never two at once.
                let copying = ClaimedCopy(copies: stores.historyCopies, clock: composition.clock)
                guard let claim = try await copying.claim(username) else {
                    throw CommandFailure("\(username)'s history is being copied by another process (a server, or another sync) right now. "
                        + "Wait for it to finish; a sync then copies only what is new.", exitCode: .upstream)
                }
                // Read while the claim is held; a failure here ends the claim
                // (run ends it for every other outcome).
                let pending: SyncState?
                do throws(SourceError) { pending = try await sync.pending(for: username) } catch {
                    _ = try? await stores.historyCopies.finish(claim, failure: error.message, at: composition.clock.now)
                    throw error
                }
                if let pending {
                    Terminal.standardError.write(pending.totalPages > 0
                        ? "Resuming the interrupted sync at page \(pending.nextPage) of \(pending.totalPages).\n"
                        : "Resuming the interrupted sync from \(Self.day(pending.toInstant)) back to \(Self.day(pending.fromInstant)).\n")
                }
                let bar = BarBox(composition.progressBar())
                let noun = fromListenBrainz ? "listens" : "scrobbles"
                let summary = try await copying.run(claim, sync) { p in
                    let place = p.reachedBack.map { "back to \(Self.day($0))" } ?? "page \(p.pagesDone)/\(p.totalPages)"
                    await bar.update(p.fraction, "\(place), \(grouped(p.imported)) new \(noun)")
                }
                await bar.finish()
                let service = fromListenBrainz ? " from ListenBrainz" : ""
                Terminal.standardOutput.write("Synced \(username)\(service): \(grouped(summary.imported)) new \(noun) from \(summary.pages) pages"
                    + (summary.duplicates > 0 ? " (\(grouped(summary.duplicates)) already archived)" : "") + ".\n")
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
        }
    }

    /// A day as the progress line names it (UTC).
    static func day(_ instant: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(instant))
        return date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!).year().month().day())
    }

    /// The bar, shared with the sync's progress callback.
    actor BarBox {
        var bar: ProgressBar
        init(_ bar: ProgressBar) { self.bar = bar }
        func update(_ fraction: Double, _ text: String) { bar.update(fraction, text) }
        func finish() { bar.finish() }
    }
}
