import Archive
import Artwork
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import LastFM
import Logging
import NIOCore
import VinylogueCore
import VinylogueServer

/// `vinylogue serve`: the self-hosted web app.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the Vinylogue web app.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(name: .customLong("data-dir"), help: "Where users, settings and caches are kept (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Flag(help: "Serve the built-in demo history for the user `demo`, with no key and no network.")
    var demo = false

    @Option(name: .customLong("art-cache-mb"), help: "How many megabytes of album art to keep on disk; the least recently shown go first (0: no limit).")
    var artCacheMegabytes = Int(ArtworkStore.defaultMaxDiskBytes >> 20)

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may wait without sending a complete request before it is closed (stops slow clients piling up).")
    var idleTimeoutSeconds: Double = 10

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535.") }
        guard idleTimeoutSeconds > 0, idleTimeoutSeconds <= 3600 else { throw ValidationError("--idle-timeout must be more than 0 and at most 3600 seconds.") }
        guard artCacheMegabytes >= 0 else { throw ValidationError("--art-cache-mb must be 0 (no limit) or more.") }
    }

    func run() async throws {
        try await Composition.with { composition in
            let directory = composition.dataDirectory(dataDir)
            let database: ArchiveDatabase
            do {
                database = try ArchiveDatabase(directory: directory)
            } catch let error as SourceError {
                throw CommandFailure("\(error.message) Check that \(directory.path) is writable, or choose another with --data-dir.", exitCode: .configuration)
            }
            let lists = ListStore(database)
            let archive = ScrobbleStore(database: database)
            if demo {
                if try await lists.users().isEmpty { try await lists.add(DemoHistory.username) }
                // The demo is charted from the archive, like an imported history.
                do {
                    try GeneratedHistory(history: composition.demo.history, store: archive).fill(now: composition.clock.now)
                } catch let error as SourceError {
                    throw CommandFailure(error)
                }
            }
            let client = composition.lastFMClient(cache: SQLiteResponseCache(database, clock: composition.clock))
            let demoCovers = DemoCoverCatalogue()
            if demo {
                for album in composition.demo.history.catalog.albums { demoCovers.register(artist: album.artist, album: album.name) }
            }
            let artwork = ArtworkStore(dataDirectory: directory, upstream: .live(composition.httpClient),
                                       imageBase: composition.environment["LASTFM_IMAGE_URL"] ?? ArtworkAddress.lastFMImageBase,
                                       demoCovers: demoCovers,
                                       maxDiskBytes: artCacheMegabytes == 0 ? nil : Int64(artCacheMegabytes) << 20)
            let dependencies = ServerDependencies(
                clock: composition.clock, lastFM: client, demo: demo ? composition.demo : nil, lists: lists,
                settings: try await CurrentSettings(store: lists, clock: composition.clock), pages: try await PageRenderer.bundled(),
                artwork: artwork, demoCovers: demoCovers, archive: archive)
            var logger = Logger(label: "vinylogue.server")
            logger.logLevel = composition.logLevel(default: .info)
            let app = buildApplication(configuration: ServerConfiguration(host: host, port: port, demo: demo,
                                                                              idleTimeout: .milliseconds(Int64(idleTimeoutSeconds * 1000))),
                                       dependencies: dependencies, logger: logger)
            Terminal.standardError.write("Vinylogue is serving at http://\(host):\(port)/ (data in \(directory.path))\n")
            do {
                try await app.runService()
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
