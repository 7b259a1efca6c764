import ArgumentParser
import Exports
import Foundation
import Stores
import VinylogueCore

/// `vinylogue export USER`: everything archived of USER, with the
/// household's list and settings, as a ZIP in ListenBrainz's export layout
/// (`PersonalExport`), which `vinylogue import` and ListenBrainz read back.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write USER's archived listens, with the list and settings, to a ZIP that vinylogue import and ListenBrainz read back.",
        discussion: """
            The listens are in ListenBrainz's export layout (listens/YEAR/MONTH.jsonl). No token, session key or \
            ListenBrainz token is written. On a server where people sign in, each downloads their own from Settings.
            """)

    @Argument(help: "The Last.fm username whose archive to export.")
    var user: String

    @Option(name: [.short, .customLong("output")], help: "The ZIP to write (default: vinylogue-USER-DATE.zip here; - for standard output).")
    var output: String?

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL archive instead of --data-dir, as postgres://user:password@host:5432/name (default: $DATABASE_URL).")
    var databaseURL: String?

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await ServeCommand.composing(.withDatabase(databaseURL)) { composition in
            let stores = try await composition.openStoresForCommand(dataDir: dataDir)
            let person: Username
            do {
                guard let stored = try await stores.archive.storedName(of: username) else {
                    throw CommandFailure("Nothing of \(username.value) is archived here, so there is nothing to export. "
                                         + "Run `vinylogue sync \(username.value)` or `vinylogue import FILE --user \(username.value)` first.",
                                         exitCode: .noData)
                }
                person = stored
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            let export = PersonalExport(person: person, owner: .household, archive: stores.archive, list: stores.lists,
                                        forwarding: stores.outbox, clock: composition.clock)
            let path = output ?? export.fileName
            let sink: FileHandle
            let partial: URL?
            if path == "-" {
                sink = FileHandle.standardOutput
                partial = nil
            } else {
                let target = URL(fileURLWithPath: path)
                guard !FileManager.default.fileExists(atPath: target.path) else {
                    throw CommandFailure("“\(path)” exists already. Give another name with --output, or remove it first.", exitCode: .usage)
                }
                // Written under a hidden name and renamed once whole: a
                // stopped export never looks like a finished one.
                let hidden = target.deletingLastPathComponent().appendingPathComponent("." + target.lastPathComponent + ".partial")
                guard FileManager.default.createFile(atPath: hidden.path, contents: nil), let handle = FileHandle(forWritingAtPath: hidden.path) else {
                    throw CommandFailure("“\(path)” cannot be written here. Check the folder's permissions, or give another place with --output.",
                                         exitCode: .usage)
                }
                sink = handle
                partial = hidden
            }
            let summary: PersonalExport.Summary
            do {
                // Written from a queue of its own: a write may block, and
                // never on Swift's cooperative threads.
                let writes = DispatchQueue(label: "vinylogue.export")
                summary = try await export.write { bytes in
                    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                        writes.async { done.resume(with: Result { try sink.write(contentsOf: bytes) }) }
                    }
                }
                if let partial {
                    try sink.synchronize()
                    try sink.close()
                    try FileManager.default.moveItem(at: partial, to: URL(fileURLWithPath: path))
                }
            } catch {
                if let partial { try? FileManager.default.removeItem(at: partial) }
                if let error = error as? SourceError { throw CommandFailure(error) }
                throw CommandFailure("The export stopped: \(error). Nothing was left behind; run the command again.", exitCode: .noData)
            }
            if path != "-" {
                Terminal.standardOutput.write("Exported \(grouped(summary.listens)) listens of \(person.value) (\(summary.months) months), "
                                              + "the list and the settings to \(path).\n")
            }
        }
    }
}
