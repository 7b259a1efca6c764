import SQLiteStore
import Stores
import Sync
import Artwork
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import LastFM
import Logging
import NIOCore
import VinylogueCore
import VinylogueApp
import HTTPServing

/// `vinylogue serve`: the self-hosted web app.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the Vinylogue web app.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port; the one chosen is printed).")
    var port = 8080

    @Option(name: .customLong("data-dir"), help: "Where users, settings and caches are kept (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL database for accounts, sessions, lists and settings, as postgres://user:password@host:5432/name (default: $DATABASE_URL, else SQLite in --data-dir).")
    var databaseURL: String?

    @Flag(help: "Serve the built-in demo: the user `demo` and four generated friends (theo, mara, felix, june), with no key and no network.")
    var demo = false

    @Option(name: .customLong("art-cache-mb"), help: "How many megabytes of album art to keep on disk; the least recently shown go first (0: no limit).")
    var artCacheMegabytes = Int(ArtworkStore.defaultMaxDiskBytes >> 20)

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may wait without sending a complete request before it is closed (stops slow clients piling up).")
    var idleTimeoutSeconds: Double = 10

    @Option(name: .customLong("tls-certificate"), help: "Serve HTTPS with this PEM certificate chain (with --tls-key; default: $VINYLOGUE_TLS_CERTIFICATE).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-certificate (default: $VINYLOGUE_TLS_KEY).")
    var tlsKey: String?

    @Option(name: .customLong("listen-rate-limit"), help: "Requests each listen token or session key may make in 10 seconds on /1/ and /2.0/ (0: no limit; default: $VINYLOGUE_LISTEN_RATE_LIMIT, else 1200).")
    var listenRateLimit: Int?

    func validate() throws {
        guard (tlsCertificate == nil) == (tlsKey == nil) else { throw ValidationError("--tls-certificate and --tls-key go together: give both, or neither.") }
        if let listenRateLimit, listenRateLimit < 0 { throw ValidationError("--listen-rate-limit must be 0 (no limit) or more.") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535, or 0 for any free port.") }
        guard idleTimeoutSeconds > 0, idleTimeoutSeconds <= 3600 else { throw ValidationError("--idle-timeout must be more than 0 and at most 3600 seconds.") }
        guard artCacheMegabytes >= 0 else { throw ValidationError("--art-cache-mb must be 0 (no limit) or more.") }
    }

    /// The web app, with a data directory that cannot be opened said so.
    static func application(_ composition: Composition, onServing: @escaping @Sendable (Int) async -> Void) async throws -> some ApplicationProtocol {
        do {
            return try await composition.buildApplication(onServing: onServing)
        } catch let error as DatabaseUnavailable {
            throw CommandFailure("\(error) Check --database (or DATABASE_URL) and that the PostgreSQL server is running and accepts this user.",
                                 exitCode: .configuration)
        } catch let error as TLSFilesUnreadable {
            throw CommandFailure("\(error) Check --tls-certificate and --tls-key (or VINYLOGUE_TLS_CERTIFICATE and VINYLOGUE_TLS_KEY).",
                                 exitCode: .configuration)
        } catch let error as SourceError {
            switch error {
            case .storage, .diskFull:
                throw CommandFailure("\(error.message) Check that \(composition.configuration.dataDirectory.path) is writable, "
                                     + "or choose another with --data-dir.", exitCode: .configuration)
            default:
                throw CommandFailure(error)
            }
        }
    }

    /// `Composition.with`, with an unusable database address said so.
    static func composing(_ configuration: VinylogueConfiguration, _ body: (Composition) async throws -> Void) async throws {
        do {
            // Only `serve` takes the test clock (`VINYLOGUE_TEST_NOW`).
            try await Composition.with(configuration, clock: configuration.clock, body)
        } catch let error as DatabaseUnavailable {
            throw CommandFailure("\(error) Check --database (or DATABASE_URL).", exitCode: .configuration)
        }
    }

    func run() async throws {
        var configuration = VinylogueConfiguration.fromProcessEnvironment()
        if let problem = configuration.problems.first { throw CommandFailure(problem, exitCode: .configuration) }
        configuration.dataDirectory = configuration.dataDirectory(dataDir)
        if let databaseURL { configuration.databaseURL = databaseURL.isEmpty ? nil : databaseURL }
        configuration.server.host = host
        configuration.server.port = port
        configuration.server.demo = demo
        configuration.server.idleTimeout = .milliseconds(Int64(idleTimeoutSeconds * 1000))
        configuration.artCacheBytes = artCacheMegabytes == 0 ? nil : Int64(artCacheMegabytes) << 20
        if let tlsCertificate, let tlsKey { configuration.server.tls = ServerConfiguration.TLSFiles(certificatePath: tlsCertificate, keyPath: tlsKey) }
        if let listenRateLimit { configuration.server.listenRateLimit = listenRateLimit }
        let scheme = configuration.server.tls == nil ? "http" : "https"
        let directory = configuration.dataDirectory
        try await Self.composing(configuration) { composition in
            let host = host
            // Printed once the socket listens: a supervisor (or a test) may
            // wait for this line instead of polling.
            let app = try await Self.application(composition) { bound in
                Terminal.standardError.write("Vinylogue is serving at \(scheme)://\(host):\(bound)/ (data in \(directory.path))\n")
            }
            do {
                try await composition.serving { try await app.runService() }
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                throw CommandFailure("Port \(port) on \(host) is already in use. Stop the program using it, or choose another port with --port.",
                                     exitCode: .configuration)
            } catch let error as IOError where error.errnoCode == EACCES {
                throw CommandFailure("Vinylogue may not listen on port \(port) (ports below 1024 need extra privileges). Choose another with --port, for example --port 8080.",
                                     exitCode: .configuration)
            } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
                throw CommandFailure("\(host) is not an address of this machine. Use --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every network).",
                                     exitCode: .configuration)
            }
        }
    }
}
