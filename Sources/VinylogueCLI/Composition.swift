import Archive
import AsyncHTTPClient
import Foundation
import LastFM
import Logging
import VinylogueCore

/// The composition root of the command line: the one place that builds the
/// object graph (clock, configuration, HTTP client, Last.fm gateway, demo)
/// from the environment. Commands ask it for what they need.
public final class Composition: Sendable {
    public let clock: WallClock
    public let environment: [String: String]
    public let lastFMConfiguration: LastFMConfiguration
    let httpClient: HTTPClient
    public let lastFM: LastFMClient
    public let demo: DemoChartSource
    let logger: Logger

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, clock: WallClock = .system) {
        self.clock = clock
        self.environment = environment
        var logger = Logger(label: "vinylogue")
        logger.logLevel = environment["VINYLOGUE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        self.logger = logger
        lastFMConfiguration = LastFMConfiguration.from(environment: environment)
        httpClient = LastFMTransport.makeHTTPClient()
        lastFM = LastFMClient(configuration: lastFMConfiguration, transport: .live(httpClient), clock: clock, logger: logger)
        demo = DemoChartSource(clock: clock)
    }

    /// A Last.fm client that keeps answers in `cache` (the web app's).
    public func lastFMClient(cache: any LastFMResponseCache) -> LastFMClient {
        LastFMClient(configuration: lastFMConfiguration, transport: .live(httpClient), cache: cache, clock: clock, logger: logger)
    }

    /// `--data-dir`, else the XDG data directory.
    public func dataDirectory(_ option: String?) -> URL {
        if let option, !option.isEmpty { return URL(fileURLWithPath: option, isDirectory: true).standardizedFileURL }
        return ArchiveDatabase.defaultDirectory(environment: environment)
    }

    /// `VINYLOGUE_LOG_LEVEL`, else `fallback`.
    public func logLevel(default fallback: Logger.Level) -> Logger.Level {
        environment["VINYLOGUE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? fallback
    }

    /// Runs `body` with a composition and shuts the HTTP client down after.
    public static func with<T>(_ body: (Composition) async throws -> T) async throws -> T {
        let composition = Composition()
        do {
            let result = try await body(composition)
            try? await composition.httpClient.shutdown()
            return result
        } catch {
            try? await composition.httpClient.shutdown()
            throw error
        }
    }

    /// The chart source for `user`, by the rule the web app follows
    /// (`ListeningSources`): `pinned` when given (`--source`), else the
    /// archive in the data directory when it holds their scrobbles, else
    /// Last.fm. The demo user is charted from the archive, filled with the
    /// generated history first.
    public func chartSource(for user: Username, _ pinned: SourceChoice?, dataDir: String? = nil) async -> any ChartSource {
        let archive: ScrobbleStore?
        do {
            archive = try archiveForCharts(of: user, pinned: pinned, dataDir: dataDir)
        } catch {
            return UnavailableChartSource(error: error)
        }
        return await ListeningSources(archive: archive, demo: demo, lastFM: lastFM).charts(for: user, pinned: pinned)
    }

    public func userSource(for user: Username, _ pinned: SourceChoice?) -> any UserSource {
        if pinned == .lastfm { return lastFM }
        return ListeningSources(archive: nil, demo: demo, lastFM: lastFM).profiles(for: user)
    }

    /// The person's time zone: `--time-zone`, else `TZ`, else the system's.
    public func timeZone(named name: String?) throws -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw CommandFailure("“\(name)” is not a time zone. Use a name such as Europe/Berlin or America/New_York.", exitCode: .usage)
        }
        return zone
    }
}

/// Where charts come from on the command line (`--source`).
public typealias SourceChoice = ListeningSources.Source
