import SQLiteStore
import Stores
import Sync
import ArgumentParser
import Foundation
import PostgresStore
import VinylogueApp
import VinylogueCore

/// `vinylogue db`: moving data between databases.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Back up a data directory, or move a home installation's data between databases.",
        subcommands: [BackupCommand.self, CopyCommand.self])
}

/// `vinylogue db backup PATH`: a consistent copy of a SQLite data directory,
/// made while `serve` uses it (`DataDirectoryBackup`).
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a data directory while it is in use: the database as it stood at one instant, and its other files.",
        discussion: """
            PATH must not exist yet, or be empty. To restore, stop serve and start it with --data-dir PATH \
            (or move PATH where the old directory was). A PostgreSQL database is backed up with pg_dump: see docs/DEPLOY.md.
            """)

    @Argument(help: "The new directory to write the copy into.")
    var path: String

    @Option(name: .customLong("data-dir"), help: "The data directory to back up (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    func run() async throws {
        // The environment is read once, into the one configuration.
        let source = VinylogueConfiguration.fromProcessEnvironment().dataDirectory(dataDir).standardizedFileURL
        let destination = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        guard ArchiveDatabase.exists(in: source) else {
            throw CommandFailure("There is no Vinylogue data in \(source.path). Give the directory serve uses with --data-dir.",
                                 exitCode: .configuration)
        }
        // Whether the destination was there before: a failed backup's
        // advice never suggests removing a directory the person had.
        let existed = FileManager.default.fileExists(atPath: destination.path)
        let summary: DataDirectoryBackup.Summary
        do {
            summary = try await DedicatedThread.run(named: "backup") { try DataDirectoryBackup.backUp(source, to: destination) }
        } catch let error as SourceError {
            let reason: String
            switch error {
            case .storage(let detail): reason = detail + "."
            case .diskFull(let detail): reason = "the disk is full (\(detail)). Free some space or back up onto another disk."
            default: reason = error.forTerminal
            }
            let next = existed ? "Give a new directory and run the command again."
                : "Remove \(destination.path), which it made, and run the command again."
            throw CommandFailure("The backup stopped: \(reason) Nothing in \(source.path) was changed. " + next, exitCode: .noData)
        }
        let out = Terminal.standardOutput
        out.write("Backed up \(source.path) into \(destination.path):\n")
        out.write("  the database (\(grouped(Int(summary.databaseBytes / 1024))) KiB): \(grouped(summary.scrobbles)) \(summary.scrobbles == 1 ? "scrobble" : "scrobbles") of "
                  + "\(summary.people) \(summary.people == 1 ? "person" : "people"), checked by SQLite\n")
        out.write("  other files (keys, album art, uploads): \(grouped(summary.files)), \(grouped(Int(summary.fileBytes / 1024))) KiB\n")
        out.write("To restore: stop serve, then start it with --data-dir \(destination.path).\n")
    }
}

/// `vinylogue db copy --from DIR --to postgres://…`: copies what a SQLite
/// data directory holds that PostgreSQL can hold (accounts, sessions, listen tokens, lists,
/// settings, saved Last.fm answers, the scrobble archive) into a PostgreSQL database, then checks
/// the counts. Run it again after an interruption: it upserts, so it ends
/// with the same rows.
struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a SQLite data directory into PostgreSQL (resumable; counts checked at the end).")

    @Option(name: .customLong("from"), help: "The data directory to copy from (as given to serve --data-dir).")
    var source: String

    @Option(name: .customLong("to"), help: "The PostgreSQL database to copy into: postgres://user:password@host:5432/name.")
    var destination: String

    /// Saved answers per transaction.
    static let page = 500
    /// Archived scrobbles per transaction.
    static let scrobblePage = 20_000

    func run() async throws {
        let directory = URL(fileURLWithPath: source, isDirectory: true).standardizedFileURL
        guard ArchiveDatabase.exists(in: directory) else {
            throw CommandFailure("There is no Vinylogue data in \(directory.path). Give the directory serve uses (its --data-dir) with --from.",
                                 exitCode: .configuration)
        }
        let export: PersonalDataExport
        do { export = PersonalDataExport(try ArchiveDatabase(directory: directory, progress: MigrationStep.toStandardError)) } catch {
            throw CommandFailure(error)
        }
        let out = Terminal.standardOutput
        do {
            try await PostgresDatabase.with(url: destination) { database in
                let copy = PostgresCopy(database)
                out.write("Copying \(directory.path) into PostgreSQL:\n")
                let accounts = try await export.accounts()
                try await copy.write(accounts)
                out.write("  accounts: \(accounts.count)\n")
                let entries = try await export.listEntries()
                try await copy.write(entries)
                out.write("  list entries: \(entries.count)\n")
                let settings = try await export.settings()
                try await copy.write(settings)
                out.write("  settings: \(settings.count)\n")
                let sessions = try await export.sessions()
                try await copy.write(sessions)
                out.write("  sessions: \(sessions.count)\n")
                let tokens = try await export.listenTokens()
                try await copy.write(tokens)
                out.write("  listen tokens: \(tokens.count)\n")
                let choices = try await export.forwardingChoices()
                try await copy.write(choices)
                out.write("  forwarding choices: \(choices.count)\n")
                let servers = try await export.musicServers()
                try await copy.write(servers)
                out.write("  music servers: \(servers.count)\n")
                let digests = try await export.digestSubscriptions()
                try await copy.write(digests)
                out.write("  digest subscriptions: \(digests.count)\n")
                let foldings = try await export.albumFoldings()
                try await copy.write(foldings)
                out.write("  album choices: \(foldings.count)\n")
                let albumChoices = try await export.albumChoiceRows()
                try await copy.write(albumChoices)
                out.write("  albums kept apart or joined: \(albumChoices.count)\n")
                var lastListen: Int64 = 0, outbox = 0
                while true {
                    let batch = try await export.outbox(after: lastListen, limit: Self.page)
                    guard let final = batch.last else { break }
                    try await copy.write(batch)
                    outbox += batch.count
                    lastListen = final.id
                }
                out.write("  listens to forward (sent or not): \(outbox)\n")
                var last = "", responses = 0
                while true {
                    let batch = try await export.responses(after: last, limit: Self.page)
                    guard let final = batch.last else { break }
                    try await copy.write(batch)
                    responses += batch.count
                    last = final.key
                }
                out.write("  saved Last.fm answers: \(responses)\n")
                let covers = try await export.covers()
                try await copy.write(covers)
                out.write("  remembered covers: \(covers.count)\n")

                // The scrobble archive, person by person, in key order:
                // each page is one transaction, and a rerun starts at the
                // newest scrobble already copied (rows there are skipped by key).
                let archive = PostgresScrobbleStore(database)
                var scrobbles = 0, shortPeople: [String] = []
                for person in try await export.archivedPeople() {
                    var from = try await copy.newestScrobble(of: person.name) ?? Int64.min
                    var after: (artist: String, track: String)?
                    while true {
                        let page = try await export.scrobbles(of: person.name, from: from, after: after, limit: Self.scrobblePage)
                        guard let last = page.last?.0 else { break }
                        try await copy.write(page, of: person.name)
                        (from, after) = (last.instant, (last.artist, last.track))
                    }
                    try await copy.write(person)
                    let held = try await archive.scrobbleCount(of: person.name)
                    if held < person.scrobbles { shortPeople.append(person.name.value) }
                    scrobbles += person.scrobbles
                    out.write("  scrobbles of \(person.name.value): \(grouped(person.scrobbles))\n")
                }
                guard shortPeople.isEmpty else {
                    throw CommandFailure("The count check failed: PostgreSQL holds fewer scrobbles of \(shortPeople.joined(separator: ", ")) than "
                                         + "\(directory.path). Run the same command again; it continues where it stopped.", exitCode: .noData)
                }

                let source = try await export.counts(), copied = try await copy.counts()
                let short = copied.filter { name, count in count < source[name] ?? 0 }
                guard short.isEmpty else {
                    throw CommandFailure("The count check failed: PostgreSQL holds fewer \(short.keys.sorted().joined(separator: ", ")) than \(directory.path). "
                                         + "Run the same command again; it continues where it stopped.", exitCode: .noData)
                }
                out.write("Counts checked: PostgreSQL holds every row copied (\(grouped(scrobbles)) scrobbles).\n")
                out.write("Album art stays in \(directory.path) (covers kept by `art fetch` included): each instance fetches its own again when asked.\n")
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch let problem as PostgresURLProblem {
            throw CommandFailure("\(problem) Check --to.", exitCode: .configuration)
        } catch {
            throw CommandFailure("The copy into PostgreSQL stopped: the database could not be reached or refused a write. "
                                 + "Check --to and that the server is running, then run the same command again; it continues where it stopped.",
                                 exitCode: .configuration)
        }
    }
}
