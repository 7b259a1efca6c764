import SQLiteStore
import Stores
import Sync
import Artwork
import AsyncHTTPClient
import Foundation
import Synchronization
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import ListenBrainzTestServer
import NIOCore
import PostgresStore
import Testing
import TestSupport
import VinylogueCore
import VinylogueApp
import VinylogueServer

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
/// against a fake Last.fm over real HTTP and a fresh data directory.
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
    /// The PostgreSQL database the app keeps personal data in, if any.
    let databaseURL: String?

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

    /// - Parameter patience: how long pages wait for work they can do
    ///   without: 30 s each by default. 10 s was not enough for a full run
    ///   on two cores shared with other builds (load 7–12): the name lookup,
    ///   a cover's details and a failing chart list each took longer.
    /// - Parameter server: how the app is served; `demo` is set from `demo`.
    ///   With `testing: .live`, give port 0 so the system picks a free one.
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
    static func run(demo: Bool = false, signIn: Bool = false, secret: String = "test-secret", postgres: Bool = false, copies: Bool = false,
                    server: ServerConfiguration = ServerConfiguration(), testing: TestingSetup = .router,
                    directory: URL? = nil,
                    patience: Patience = .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10),
                                                                  database: .seconds(10)),
                    _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
        guard postgres else {
            return try await run(demo: demo, signIn: signIn, secret: secret, databaseURL: nil, copies: copies, server: server, testing: testing,
                                 directory: directory,
                                 patience: patience, body)
        }
        let cluster = try TestCluster.url()
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
            try await run(demo: demo, signIn: signIn, secret: secret, databaseURL: url, copies: copies, server: server, testing: testing,
                          directory: directory,
                          patience: patience, body)
        }
    }

    private static func run(demo: Bool, signIn: Bool, secret: String, databaseURL: String?, copies: Bool, server: ServerConfiguration,
                            testing: TestingSetup, directory given: URL?, patience: Patience,
                            _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        let listenBrainz = FakeListenBrainz(clock: clock.wallClock)
        let directory = given ?? Self.scratch.appendingPathComponent("vinylogue-routes-\(UUID().uuidString)")
        defer { if given == nil { try? FileManager.default.removeItem(at: directory) } }
        try await FakeListenBrainzServer.withRunning(listenBrainz) { listenBrainzRoot in
        try await FakeLastFMServer.withRunning(fake) { url in
            // The configuration `serve` would read, pointed at the fake
            // Last.fm and a fresh data directory; built by the same root.
            var configuration = VinylogueConfiguration(environment: [:])
            configuration.dataDirectory = directory
            configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 200, maxAttempts: 1)
            configuration.listenBrainz = .init(apiRoot: listenBrainzRoot, timeout: .seconds(10), attempts: 1)
            if signIn {
                configuration.lastFM.apiSecret = secret
                configuration.lastFM.authURL = url.replacingOccurrences(of: "2.0/", with: "api/auth/")
            }
            configuration.imageBase = url.replacingOccurrences(of: "2.0/", with: "i/u/")
            configuration.databaseURL = databaseURL
            configuration.server = server
            configuration.server.demo = demo
            configuration.patience = patience
            // Copies of Last.fm histories make requests of their own in
            // the background: only the tests about them turn them on.
            configuration.copiesHistories = copies
            try await Composition.with(configuration, clock: clock.wallClock) { composition in
                let app = try await composition.buildApplication()
                let database = try ArchiveDatabase(directory: directory)
                let harness = Harness(fake: fake, listenBrainz: listenBrainz, clock: clock, lists: SQLiteListStore(database), database: database,
                                      dataDirectory: directory,
                                      background: composition.background, databaseURL: databaseURL)
                try await app.test(testing) { client in try await body(harness, client) }
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
