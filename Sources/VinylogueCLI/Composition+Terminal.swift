import Foundation
import SQLiteStore
import Stores
import Sync
import VinylogueApp

extension Composition {
    /// The person's time zone: `--time-zone`, else `TZ`, else the system's.
    func timeZone(named name: String?) throws -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw CommandFailure("“\(name)” is not a time zone. Use a name such as Europe/Berlin or America/New_York.", exitCode: .usage)
        }
        return zone
    }

    /// Whether `terminal` may show colour: only on a terminal, never with
    /// `NO_COLOR` set, never on `TERM=dumb`.
    func allowsColour(on terminal: Terminal) -> Bool {
        !configuration.noColour && !configuration.dumbTerminal && terminal.isTerminal
    }

    /// A progress bar on standard error, drawn only on a real terminal.
    func progressBar() -> ProgressBar {
        ProgressBar(enabled: isatty(2) == 1 && !configuration.dumbTerminal)
    }
}

extension Composition {
    /// Every store of the one configured database, for a command, with a
    /// PostgreSQL server that cannot be used said so with what to check.
    func openStoresForCommand(dataDir: String?) async throws -> any StoreBackend {
        do {
            return try await openStorage(dataDir: dataDir).backend
        } catch let error as DatabaseUnavailable {
            throw CommandFailure("\(error) Check --database (or DATABASE_URL) and that the PostgreSQL server is running and accepts this user.",
                                 exitCode: .configuration)
        }
    }

    /// The archive a command reads and writes (`openArchive`), with a
    /// PostgreSQL server that cannot be used said so with what to check.
    func openArchiveForCommand(dataDir: String?) async throws -> any ScrobbleArchive {
        do {
            return try await openArchive(dataDir: dataDir)
        } catch let error as DatabaseUnavailable {
            throw CommandFailure("\(error) Check --database (or DATABASE_URL) and that the PostgreSQL server is running and accepts this user.",
                                 exitCode: .configuration)
        }
    }
}

extension VinylogueConfiguration {
    /// The process's configuration with `--database` (when given) in place
    /// of `DATABASE_URL`; an empty one means SQLite.
    static func withDatabase(_ url: String?) -> VinylogueConfiguration {
        var configuration = VinylogueConfiguration.fromProcessEnvironment()
        if let url { configuration.databaseURL = url.isEmpty ? nil : url }
        return configuration
    }
}
