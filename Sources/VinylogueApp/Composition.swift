import SQLiteStore
import Stores
import Sync
import Artwork
import AsyncHTTPClient
import Foundation
import Hummingbird
import LastFM
import ListenBrainz
import Logging
import Mail
import MusicServers
import PostgresStore
import VinylogueCore
import Web
import Synchronization
import Workers

/// The composition root: the one place that builds Vinylogue's object
/// graph — HTTP client, Last.fm gateway, demo, archive, sources, and the web
/// app — from one `VinylogueConfiguration` and a clock. `vinylogue serve`,
/// every other command and the route tests all go through it.
public final class Composition: Sendable {
    public let configuration: VinylogueConfiguration
    public let clock: WallClock
    let httpClient: HTTPClient
    /// People's own music servers are asked over a client of their own:
    /// it follows no redirect (`SubsonicTransport`).
    let musicServerHTTP: HTTPClient
    let subsonicTransport: SubsonicTransport
    /// How Last.fm's API and image host are reached (`Transports`).
    let lastFMTransport: LastFMTransport
    let imageUpstream: ArtworkUpstream
    /// How mail reaches the mail server (`Transports`).
    let mailTransport: @Sendable (SMTPConfiguration) -> any MailDelivery
    /// Last.fm without a cache (the command line's; the web app's keeps
    /// answers in its database).
    public let lastFM: LastFMClient
    /// ListenBrainz: `lb:` users' listens and profiles.
    public let listenBrainz: ListenBrainzClient
    public let demo: DemoChartSource
    /// Work the web app's pages start and do not wait for.
    public let background = BackgroundWork()
    /// The threads the web server's requests run on (`serving`), where a
    /// short SQLite read runs without leaving the thread.
    public let requestThreads = RequestThreads(count: RequestThreads.standardCount)
    /// The web app's job runner, once built.
    let jobRunner = Mutex<JobRunner?>(nil)

    /// Returns once the web app's job runner has nothing running or due
    /// (for tests: a copy or an import a request queued has ended).
    public func jobsIdle() async {
        await jobRunner.withLock { $0 }?.idle()
    }
    /// The PostgreSQL database, when one is configured; its pool runs for
    /// as long as the composition does.
    let postgres: PostgresDatabase?
    /// A second, small pool on the same database for the locks that make
    /// one instance the fetcher of each Last.fm request.
    let postgresLocks: PostgresDatabase?
    let logger: Logger

    /// Where a long migration (an archive's weekly charts counted after an
    /// update) says how far it is.
    let migrationProgress: MigrationProgress = MigrationStep.toStandardError

    init(configuration: VinylogueConfiguration, clock: WallClock, transports: Transports) throws(DatabaseUnavailable) {
        self.configuration = configuration
        do {
            // The pool retries connections on its own and says so at info
            // level: a warning is the least worth printing here.
            var databaseLogger = Logger(label: "vinylogue.postgres")
            databaseLogger.logLevel = configuration.logLevel ?? .warning
            postgres = try configuration.databaseURL.map { url throws(PostgresURLProblem) in
                try PostgresDatabase(url: url, logger: databaseLogger)
            }
            postgresLocks = try configuration.databaseURL.map { url throws(PostgresURLProblem) in
                try PostgresDatabase(url: url, maximumConnections: 40, logger: databaseLogger)
            }
        } catch {
            throw DatabaseUnavailable(reason: "its address must look like postgres://user:password@host:5432/database.")
        }
        self.clock = clock
        var logger = Logger(label: "vinylogue")
        logger.logLevel = configuration.logLevel ?? .error
        self.logger = logger
        httpClient = LastFMTransport.makeHTTPClient()
        musicServerHTTP = SubsonicTransport.makeHTTPClient()
        subsonicTransport = transports.subsonic(musicServerHTTP)
        lastFMTransport = transports.lastFM(httpClient)
        imageUpstream = transports.images(httpClient)
        mailTransport = transports.mail
        lastFM = LastFMClient(configuration: configuration.lastFM, transport: lastFMTransport, clock: clock, logger: logger)
        listenBrainz = ListenBrainzClient(configuration: configuration.listenBrainz, transport: transports.listenBrainz(httpClient))
        demo = DemoChartSource(clock: clock)
    }

    /// A client of the person's Subsonic-API server `account`.
    public func subsonic(_ account: SubsonicAccount) -> SubsonicClient {
        SubsonicClient(account: account, transport: subsonicTransport)
    }

    /// Runs `body` with the graph for `configuration` and shuts its HTTP
    /// client down after, however `body` ends. With a PostgreSQL database,
    /// its pool runs around `body` (connecting only when first used).
    /// `transports` are how Last.fm and ListenBrainz are reached: over HTTP
    /// unless a test hands in stand-ins.
    public static func with<T>(_ configuration: VinylogueConfiguration = .fromProcessEnvironment(), clock: WallClock = .system,
                               transports: Transports = .live, _ body: (Composition) async throws -> T) async throws -> T {
        let composition = try Composition(configuration: configuration, clock: clock, transports: transports)
        defer { composition.requestThreads.stop() }
        do {
            let result: T
            if let postgres = composition.postgres {
                result = try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await postgres.run() }
                    if let locks = composition.postgresLocks { group.addTask { await locks.run() } }
                    defer { group.cancelAll() }
                    return try await body(composition)
                }
            } else {
                result = try await body(composition)
            }
            try? await composition.httpClient.shutdown()
            try? await composition.musicServerHTTP.shutdown()
            return result
        } catch {
            try? await composition.httpClient.shutdown()
            try? await composition.musicServerHTTP.shutdown()
            throw error
        }
    }

    /// Runs `server` (the web app's service) with its requests on
    /// `requestThreads`: every task the server starts for a connection is
    /// a child of this one and prefers them too.
    public func serving<T>(_ server: () async throws -> T) async throws -> T {
        try await requestThreads.running(server)
    }

    /// A Last.fm client that keeps answers in `cache` (the web app's).
    public func lastFMClient(cache: any LastFMResponseCache, permits: (any LastFMRequestPermits)? = nil) -> LastFMClient {
        LastFMClient(configuration: configuration.lastFM, transport: lastFMTransport, cache: cache, permits: permits, clock: clock, logger: logger)
    }

    /// `--data-dir`, else the configured data directory.
    public func dataDirectory(_ option: String?) -> URL {
        configuration.dataDirectory(option)
    }

    /// The configured log level, else `fallback`.
    public func logLevel(default fallback: Logger.Level) -> Logger.Level {
        configuration.logLevel ?? fallback
    }

    /// The chart source for `user`, by the rule the web app follows
    /// (`ListeningSources`): `pinned` when given (`--source`), else the
    /// archive in the data directory when it holds their scrobbles, else
    /// Last.fm. The demo user is charted from the archive, filled with the
    /// generated history first; the demo's friends are charted by the demo
    /// only with `--source demo`.
    public func chartSource(for user: Username, _ pinned: SourceChoice?, dataDir: String? = nil) async -> any ChartSource {
        let archive: (any ScrobbleArchive)?
        do {
            archive = try await archiveForCharts(of: user, pinned: pinned, dataDir: dataDir)
        } catch {
            return UnavailableChartSource(error: error as? SourceError ?? .storage(detail: "\(error)"))
        }
        return await ListeningSources(archive: archive, demo: demoSource(for: user, pinned), lastFM: lastFM, listenBrainz: listenBrainz)
            .charts(for: user, pinned: pinned)
    }

    public func userSource(for user: Username, _ pinned: SourceChoice?) -> any UserSource {
        if pinned == .lastfm { return lastFM }
        return ListeningSources(archive: nil, demo: demoSource(for: user, pinned), lastFM: lastFM, listenBrainz: listenBrainz).profiles(for: user)
    }

    /// The demo, when it answers for `user` on the command line: for `demo`
    /// unasked, as always; for the demo's friends only with `--source demo`,
    /// since their names are ordinary Last.fm names.
    func demoSource(for user: Username, _ pinned: SourceChoice?) -> DemoChartSource? {
        user == DemoHistory.username || pinned == .demo ? demo : nil
    }
}

/// Where charts come from on the command line (`--source`).
public typealias SourceChoice = ListeningSources.Source

/// The configured PostgreSQL database cannot be used: its address is not
/// one, or the server cannot be reached or migrated.
public struct DatabaseUnavailable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "The PostgreSQL database could not be used: \(reason)" }
}
