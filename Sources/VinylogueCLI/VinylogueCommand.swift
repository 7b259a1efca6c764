import ArgumentParser
import Foundation
import VinylogueCore

/// `vinylogue`: this week's album chart, N years ago.
public struct VinylogueCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "vinylogue",
        abstract: "Relive what you were listening to this same week, years ago.",
        discussion: """
            Exit codes: 0 ok, 1 usage, 2 user not found or no such data, \
            3 upstream failure (Last.fm down, rate limited, unreadable answer), \
            4 configuration (for example a missing LASTFM_API_KEY), \
            130 interrupted with Ctrl-C (what was done is kept).
            """,
        subcommands: [ChartCommand.self, YearsCommand.self, YearCommand.self, PlaylistCommand.self, HistoryCommand.self, AlbumLifeCommand.self, AlbumsCommand.self, RediscoverCommand.self, UserCommand.self,
                      ServeCommand.self, ImportCommand.self, ExportCommand.self, SyncCommand.self, ArtCommand.self, DigestCommand.self, BenchCommand.self,
                      DatabaseCommand.self]
    )

    public init() {}

    /// Parses `arguments`, runs the command, and exits with the documented code.
    public static func main(arguments: [String]) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch let failure as CommandFailure {
            // A failure may quote a file's or a service's own words: printed visibly.
            Terminal.standardError.write("vinylogue: \(Terminal.printable(failure.message))\n")
            Foundation.exit(failure.exitCode.rawValue)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            Terminal.standardError.write(message + "\n")
            // ArgumentParser uses 64 for usage errors; Vinylogue documents 1.
            Foundation.exit(code.rawValue == 64 ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}

/// The documented exit codes.
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    case usage = 1
    case noData = 2
    case upstream = 3
    case configuration = 4
    /// Stopped by Ctrl-C; the shell's convention (128 + SIGINT).
    case interrupted = 130

    /// The exit code for a source failure.
    public init(_ error: SourceError) {
        switch error {
        case .notFound, .privateProfile: self = .noData
        case .missingAPIKey, .invalidAPIKey: self = .configuration
        case .rateLimited, .temporarilyUnavailable, .timeout, .stillWaiting, .transport, .malformedResponse, .api, .copyFailed: self = .upstream
        case .storage, .notArchived, .diskFull, .cancelled: self = .noData
        case .unreadableFile: self = .usage
        case .listenBrainz(.userNotFound): self = .noData
        case .listenBrainz(.invalidToken): self = .configuration
        case .listenBrainz: self = .upstream
        }
    }
}

/// A failure a command reports as a sentence and an exit code.
public struct CommandFailure: Error, Sendable {
    public let message: String
    public let exitCode: ExitStatus

    public init(_ message: String, exitCode: ExitStatus) {
        self.message = message
        self.exitCode = exitCode
    }

    public init(_ error: SourceError) {
        self.init(error.forTerminal, exitCode: ExitStatus(error))
    }
}
