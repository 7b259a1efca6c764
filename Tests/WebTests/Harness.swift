import Artwork
import AsyncHTTPClient
import Foundation
import ListenIngest
import Workers
import HTTPServing
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import ListenBrainzTestServer
import Mail
import NIOCore
import PostgresStore
import SQLiteStore
import Stores
import Sync
import Synchronization
import TestSupport
import Testing
import VinylogueApp
import VinylogueCore
import Web

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(days: Double) { current.withLock { $0 = $0.addingTimeInterval(days * 86400) } }
    var wallClock: WallClock { WallClock { self.now } }
}

/// 8 July 2023, 09:00 UTC: three years after ybsc's captured week.
let july2023 = Date(timeIntervalSince1970: 1_688_806_800)

/// The app built by the composition root exactly as `serve` builds it,
/// against a fake Last.fm and a fake ListenBrainz (answering in this
/// process, or over HTTP) and a fresh data directory.
struct Harness: Sendable {
    let fake: FakeLastFM
    /// The local ListenBrainz the app's `LISTENBRAINZ_API_URL` points at.
    let listenBrainz: FakeListenBrainz
    let clock: TestClock
    let lists: SQLiteListStore
    let database: ArchiveDatabase
    /// The app's data directory.
    let dataDirectory: URL
    /// The work pages started and did not wait for; `idle()` waits for it.
    let background: BackgroundWork
    /// Returns once the job runner has nothing running or due.
    let jobsIdle: @Sendable () async -> Void
    /// The PostgreSQL database the app keeps personal data in, if any.
    let databaseURL: String?

    /// Returns once what requests set going has ended: the pages' own
    /// background work and the jobs they queued (copies, imports).
    func idle() async {
        await background.idle()
        await jobsIdle()
        await background.idle()
    }

    /// A browser session: remembers the CSRF cookie and token.
    struct Session {
        var cookie: String = ""
        var token: String = ""
    }

    /// Where test data directories go: memory-backed `/dev/shm` when there
    /// is one (SQLite's syncs to disk slowed a loaded run past its patience),
    /// else the temporary directory.
    static let scratch: URL = {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        return FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
    }()

    /// How the app reaches the fake Last.fm (API, image host) and the fake
    /// ListenBrainz.
    enum Fakes: Sendable {
        /// The app's requests are handed to the fakes directly, in this
        /// process (`Transports` of in-process stand-ins): no socket.
        case inProcess
        /// The fakes serve HTTP on local ports and the app reaches them as
        /// it reaches the real services (`Transports.live`).
        case servers
    }

    /// - Parameter patience: how long pages wait for work they can do
    ///   without: 10 s each by default.
    /// - Parameter server: how the app is served; `demo` is set from `demo`.
    ///   With `testing: .live`, give port 0 so the system picks a free one.
    /// - Parameter fakes: in this process by default; `.servers` for a test
    ///   about the whole way over HTTP.
    /// - Parameter signIn: configure the key's shared secret, so people sign
    ///   in with Last.fm (through the fake's approval page).
    /// - Parameter copies: copy listed Last.fm people's histories into
    ///   the archive on view and at sign-in, as `serve` does by default.
    /// - Parameter postgres: keep accounts, sessions, lists and settings in
    ///   a fresh PostgreSQL database in the test cluster (its URL is then in
    ///   `databaseURL`).
    /// - Parameter directory: the data directory, for a test that starts the
    ///   app again on the data of an earlier run (the caller removes it);
    ///   nil: a fresh one, removed at the end.
    /// - Parameter mail: where email goes (a mail server is then configured,
    ///   and the weekly digest is on); nil: no email.
    static func run(demo: Bool = false, signIn: Bool = false, secret: String = "test-secret", postgres: Bool = false, copies: Bool = false,
                    server: ServerConfiguration = ServerConfiguration(), testing: TestingSetup = .router,
                    fakes: Fakes = .inProcess, directory: URL? = nil, mail: (any MailDelivery)? = nil,
                    musicServer: FakeSubsonicLibrary? = nil,
                    patience: Patience = .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10),
                                                                  database: .seconds(10)),
                    _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
        let setup = Setup(demo: demo, signIn: signIn, secret: secret, copies: copies, server: server, testing: testing, fakes: fakes,
                          directory: directory, patience: patience, mail: mail, musicServer: musicServer)
        guard postgres else {
            return try await run(setup, databaseURL: nil, body)
        }
        let cluster = try TestCluster.url()
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
            try await run(setup, databaseURL: url, body)
        }
    }

    /// The host the operator lists for people's music servers in every route test.
    static let musicServerHost = "music.test"

    /// What a test asked `run` for.
    private struct Setup: Sendable {
        var demo: Bool, signIn: Bool, secret: String, copies: Bool
        var server: ServerConfiguration, testing: TestingSetup, fakes: Fakes, directory: URL?, patience: Patience
        var mail: (any MailDelivery)?
        /// A Subsonic-API library people's servers at `Harness.musicServerHost` reach.
        var musicServer: FakeSubsonicLibrary?
    }

    private static func run(_ setup: Setup, databaseURL: String?, _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        let listenBrainz = FakeListenBrainz(clock: clock.wallClock)
        let directory = setup.directory ?? Self.scratch.appendingPathComponent("vinylogue-routes-\(UUID().uuidString)")
        defer { if setup.directory == nil { try? FileManager.default.removeItem(at: directory) } }

        // The configuration `serve` would read, pointed at the fakes and a
        // fresh data directory; the app built by the same root.
        @Sendable func serve(lastFMAPI url: String, listenBrainzRoot: String, transports: Transports) async throws {
            var configuration = VinylogueConfiguration(environment: [:])
            configuration.dataDirectory = directory
            configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 200, maxAttempts: 1, timeout: .seconds(10))
            configuration.listenBrainz = .init(apiRoot: listenBrainzRoot, timeout: .seconds(10), attempts: 1)
            if setup.signIn {
                configuration.lastFM.apiSecret = setup.secret
                configuration.lastFM.authURL = url.replacingOccurrences(of: "2.0/", with: "api/auth/")
            }
            configuration.imageBase = url.replacingOccurrences(of: "2.0/", with: "i/u/")
            configuration.databaseURL = databaseURL
            configuration.server = setup.server
            configuration.server.demo = setup.demo
            configuration.patience = setup.patience
            // Copies of Last.fm histories make requests of their own in
            // the background: only the tests about them turn them on.
            configuration.copiesHistories = setup.copies
            // The operator lets people's servers be at the test's host (no DNS asked).
            configuration.musicServerHosts = Self.musicServerHost
            if setup.mail != nil {
                configuration.mail = MailConfiguration(server: try SMTPConfiguration.parse(url: "smtp://mail.invalid:25", caFile: nil),
                                                       from: MailAddress("vinylogue@example.org")!)
            }
            try await Composition.with(configuration, clock: clock.wallClock, transports: transports) { composition in
                let app = try await composition.buildApplication()
                let database = try ArchiveDatabase(directory: directory)
                let harness = Harness(fake: fake, listenBrainz: listenBrainz, clock: clock, lists: SQLiteListStore(database), database: database,
                                      dataDirectory: directory,
                                      background: composition.background, jobsIdle: { await composition.jobsIdle() },
                                      databaseURL: databaseURL)
                try await app.test(setup.testing) { client in try await body(harness, client) }
            }
        }

        switch setup.fakes {
        case .inProcess:
            // Addresses nothing answers (`.invalid`): a request that went
            // around the transports would fail loudly.
            try await serve(lastFMAPI: "http://fake-lastfm.invalid/2.0/", listenBrainzRoot: "http://fake-listenbrainz.invalid",
                            transports: Transports(lastFM: .inProcess(fake), images: .inProcess(fake), listenBrainz: .inProcess(listenBrainz),
                                                   mail: setup.mail, subsonic: setup.musicServer?.transport))
            // What stopping the servers does: answers still held go.
            await fake.releaseHeld()
            await listenBrainz.releaseHeld()
        case .servers:
            try await FakeListenBrainzServer.withRunning(listenBrainz) { listenBrainzRoot in
                try await FakeLastFMServer.withRunning(fake) { url in
                    try await serve(lastFMAPI: url, listenBrainzRoot: listenBrainzRoot, transports: .live)
                }
            }
        }
    }
}

extension TestClientProtocol {
    /// GETs `uri` once and returns the status and body text (for tests
    /// about a page that says Last.fm is slow).
    func getOnce(_ uri: String, session: Session? = nil) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        var headers: HTTPFields = [:]
        if let session, !session.cookie.isEmpty { headers[.cookie] = session.cookie }
        let response = try await execute(uri: uri, method: .get, headers: headers, body: nil)
        return (response.status, String(buffer: response.body), response.headers)
    }

    /// GETs `uri`, and again while the page says it is still waiting for
    /// Last.fm, as a visitor would reload it (each reload joins the requests
    /// still under way): a run loaded past a page's 10 s patience still
    /// ends with the whole page. At most 20 reloads.
    func get(_ uri: String, session: Session? = nil) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        var page = try await getOnce(uri, session: session)
        for _ in 0..<20 where page.body.contains("Last.fm is slow to answer right now") {
            page = try await getOnce(uri, session: session)
        }
        return page
    }

    /// Opens `page` (`/settings` by default) to get a CSRF cookie and token,
    /// like a browser would.
    func session(from page: String = "/settings") async throws -> Harness.Session {
        let response = try await execute(uri: page, method: .get, headers: [:], body: nil)
        let setCookie = try #require(response.headers[.setCookie])
        let cookie = String(setCookie.prefix { $0 != ";" })
        let token = String(cookie.split(separator: "=")[1])
        return Harness.Session(cookie: cookie, token: token)
    }

    /// POSTs a form with the session's cookie and token.
    func post(_ uri: String, _ fields: [String: String], session: Harness.Session, token: String? = nil) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        var all = fields
        all["csrf"] = token ?? session.token
        let body = all.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        let response = try await execute(uri: uri, method: .post,
                                         headers: [.cookie: session.cookie, .contentType: "application/x-www-form-urlencoded"],
                                         body: ByteBuffer(string: body))
        return (response.status, String(buffer: response.body), response.headers)
    }
}

typealias Session = Harness.Session

extension String {
    /// Whether `parts` appear in this order.
    func containsInOrder(_ parts: [String]) -> Bool {
        var rest = self[...]
        for part in parts {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }
}
