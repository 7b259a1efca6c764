import ArgumentParser
import Foundation
import VinylogueApp
import VinylogueCore

/// `vinylogue digest send USER`: this week's digest, now, to the address
/// USER confirmed on Settings (what Settings' "Send me this week's digest
/// now" does).
struct DigestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "The weekly email digest: this week, years ago.",
        subcommands: [Send.self])

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send USER's digest of this week now, to the address they confirmed on Settings.",
            discussion: """
                The mail server is VINYLOGUE_SMTP_URL (smtp://user:password@host:587, or smtps:// for port 465), the \
                sender VINYLOGUE_MAIL_FROM, and the links lead to VINYLOGUE_PUBLIC_URL, as for `vinylogue serve`. The \
                email goes through the same queue as the server's, so a server on the same database does not send it \
                again. Exit 0: sent; 2: no confirmed address; 3: the mail server or the database did not take it; \
                4: the mail server or public address is not configured.
                """)

        @Argument(help: "The Last.fm name whose digest to send (an account, or the household's “me”).")
        var user: String

        @Option(name: .customLong("data-dir"), help: "The data directory (default: $XDG_DATA_HOME/vinylogue).")
        var dataDir: String?

        @Option(name: .customLong("database"), help: "A PostgreSQL database instead of --data-dir (default: $DATABASE_URL).")
        var databaseURL: String?

        @Flag(help: "The instance serves the built-in demo (serve --demo): its people are charted as it charts them.")
        var demo = false

        func run() async throws {
            guard let username = Username(validating: user) else {
                throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
            }
            var configuration = VinylogueConfiguration.fromProcessEnvironment()
            if let problem = configuration.problems.first { throw CommandFailure(problem, exitCode: .configuration) }
            configuration.dataDirectory = configuration.dataDirectory(dataDir)
            if let databaseURL { configuration.databaseURL = databaseURL.isEmpty ? nil : databaseURL }
            configuration.server.demo = demo
            try await ServeCommand.composing(configuration) { composition in
                switch try await composition.sendDigestNow(to: username) {
                case .sent(let address, let note):
                    print("Sent \(username.value)'s digest of this week to \(address)." + (note.map { " " + $0 } ?? ""))
                case .notSent(let sentence, let reason):
                    let code: ExitStatus = switch reason {
                    case .noDigest: .noData
                    case .configuration: .configuration
                    case .upstream: .upstream
                    }
                    throw CommandFailure(sentence, exitCode: code)
                }
            }
        }
    }
}
