import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport
import VinylogueCore

/// A real `vinylogue serve` forwarding to a real local upstream
/// (`fake-lastfm`, `fake-listenbrainz`), killed with SIGKILL at random
/// moments while it forwards (the upstream made slow, so kills land between
/// the upstream taking a batch and the outbox hearing so), and started
/// again each time on the same data directory. In the end every listen the
/// server accepted reached the upstream exactly once.
/// The time limit is the hang guard of the waits for every listen to
/// arrive: events, with no deadline of their own.
@Suite(.timeLimit(.minutes(2))) struct ForwardingKillTests {
    typealias Child = ConcurrentServeTests.Child
    typealias Fleet = FleetProcessTests

    /// A server that can be started again on the same data directory.
    struct Server {
        let binary: URL
        let data: String
        let environment: [String: String]
        var arguments: [String] = []

        func start() async throws -> (Child, String) {
            let server = try Child(binary, ["serve", "--port", "0", "--data-dir", data] + arguments, environment: environment,
                                   marker: "Vinylogue is serving at ", output: \.standardError)
            return (server, String(try await server.serving().dropLast()))
        }
    }

    static func post(_ http: HTTPClient, _ url: String, _ json: String) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: json))
        _ = try await ConcurrentServeTests.execute(http, request)
    }

    /// The settings page's CSRF cookie and token for `cookie`'s browser, and
    /// a new listen token made there.
    static func token(_ http: HTTPClient, _ base: String, cookie: String?) async throws -> (token: String, cookie: String, csrf: String) {
        let (settings, _) = try await Fleet.send(http, base + "/settings", cookie: cookie)
        let csrf = try #require(Fleet.cookie("vinylogue_csrf", in: settings))
        let both = [cookie, "vinylogue_csrf=\(csrf)"].compactMap { $0 }.joined(separator: "; ")
        let (_, page) = try await Fleet.send(http, base + "/settings/listen-token", method: .POST, cookie: both, form: "csrf=\(csrf)")
        let shown = try #require(page.range(of: "<code class=\"listen-token\">"))
        return (String(page[shown.upperBound...].prefix(64)), both, csrf)
    }

    /// Six rounds of 40 listens (imports of 10, each accepted before the
    /// kill), each round ended by SIGKILL at a random moment and a restart.
    /// Returns the accepted tracks and the server's last life.
    static func killWhileForwarding(_ http: HTTPClient, _ server: Server, first: (Child, String), token: String,
                                    seed: UInt64) async throws -> (accepted: [String], server: (Child, String)) {
        var random = SplitMix(seed: seed)
        var (child, base) = first
        let now = Int64(Date().timeIntervalSince1970)
        var accepted: [String] = []
        for round in 0..<6 {
            for part in 0..<4 {
                let tracks = (0..<10).map { "Kill \(round)-\(part)-\($0)" }
                let listens = tracks.enumerated().map { i, track in
                    #"{"listened_at":\#(now - 7200 + Int64(accepted.count + i) * 30),"track_metadata":{"artist_name":"Killed Artist","track_name":"\#(track)"}}"#
                }
                var submit = HTTPClientRequest(url: base + "/1/submit-listens")
                submit.method = .POST
                submit.headers.add(name: "Authorization", value: "Token \(token)")
                submit.body = .bytes(ByteBuffer(string: #"{"listen_type":"import","payload":[\#(listens.joined(separator: ","))]}"#))
                let answer = try await ConcurrentServeTests.execute(http, submit)
                #expect(answer.status == .ok)
                accepted += tracks
            }
            // Killed while it forwards, at a random moment.
            try await Task.sleep(for: .milliseconds(Int(random.next() % 900)))
            kill(child.process.processIdentifier, SIGKILL)
            _ = await child.exit().value
            (child, base) = try await server.start()
        }
        return (accepted, (child, base))
    }

    /// Waits until the settings page says all `count` were sent and none wait.
    static func outboxSettles(_ http: HTTPClient, _ base: String, cookie: String?, count: Int, seed: UInt64) async throws {
        var state = ""
        for _ in 0..<100 {
            (_, state) = try await Fleet.send(http, base + "/settings", cookie: cookie)
            if state.contains("\(count) sent,") && !state.contains(" waiting.") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(state.contains("\(count) sent,") && !state.contains(" waiting.") && !state.contains(" failed."), "seed \(seed)")
    }

    static func expectOnce(_ arrived: [String], _ accepted: [String], seed: UInt64) {
        #expect(arrived.count == accepted.count, "seed \(seed): \(arrived.count) arrived for \(accepted.count) accepted")
        #expect(Set(arrived) == Set(accepted), "seed \(seed)")
        let twice = Dictionary(grouping: arrived, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(twice.isEmpty, "seed \(seed): sent twice: \(twice)")
    }

    static func client() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    struct Scrobbled: Decodable {
        let track: String
    }

    @Test func everyAcceptedListenReachesLastFMOnceThoughTheServerIsKilled() async throws {
        let seed = KillTests.seed()
        let dir = try TemporaryDirectory()
        let fake = try Child(try KillTests.executable("fake-lastfm"), ["--port", "0"], marker: "fake Last.fm listening at ",
                             output: \.standardOutput)
        let lastFMAPI = try await fake.serving()
        let lastFM = String(lastFMAPI.dropLast("/2.0/".count))
        var environment = ProcessInfo.processInfo.environment
        environment["LASTFM_API_URL"] = lastFMAPI
        environment["LASTFM_API_KEY"] = "test-key"
        environment["LASTFM_API_SECRET"] = "test-secret"
        environment["LASTFM_AUTH_URL"] = lastFM + "/api/auth/"
        environment["DATABASE_URL"] = nil
        let server = Server(binary: try KillTests.executable(), data: dir.url.appendingPathComponent("data").path, environment: environment)
        let http = Self.client()
        do {
            let first = try await server.start()
            // Signed in as RJ, forwarding to Last.fm on, a listen token.
            let session = try await Fleet.signIn(http, first.1, lastFM: lastFM, as: "RJ")
            let (token, cookie, csrf) = try await Self.token(http, first.1, cookie: session)
            let (on, _) = try await Fleet.send(http, first.1 + "/settings/forwarding", method: .POST, cookie: cookie, form: "csrf=\(csrf)&lastfm=on")
            #expect(on.status == .seeOther)
            // Last.fm takes each batch, then answers 300 ms later.
            try await Self.post(http, lastFM + "/_fake/faults", #"{"fault":{"delay":{"milliseconds":300}},"method":"track.scrobble"}"#)

            let (accepted, last) = try await Self.killWhileForwarding(http, server, first: first, token: token, seed: seed)
            // The last life sends what is left; Last.fm ends with every listen.
            // An event: the fake answers once it has them all.
            let done = try await ConcurrentServeTests.execute(
                http, HTTPClientRequest(url: lastFM + "/_fake/scrobbled?user=RJ&count=\(accepted.count)"), timeout: nil)
            #expect(done.status == .noContent)
            try await Self.outboxSettles(http, last.1, cookie: session, count: accepted.count, seed: seed)
            let answer = try await ConcurrentServeTests.execute(http, HTTPClientRequest(url: lastFM + "/_fake/scrobbles"))
            let received = try JSONDecoder().decode([String: [Scrobbled]].self, from: Data(try await answer.body.collect(upTo: 4 << 20).readableBytesView))
            Self.expectOnce((received["RJ"] ?? []).map(\.track), accepted, seed: seed)
            let asked = try await ConcurrentServeTests.upstreamRequests(http, lastFM).map(\.method)
            print("ForwardingKillTests (Last.fm): \(asked.filter { $0 == "track.scrobble" }.count) scrobble requests, "
                  + "\(asked.filter { $0 == "user.getrecenttracks" }.count) checks of what arrived")
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        _ = fake
    }

    struct Received: Decodable {
        struct Kept: Decodable {
            struct Listen: Decodable { let track: String }
            let listen: Listen
        }
        let listensReceived: Int
        let listens: [Kept]
    }

    @Test func everyAcceptedListenReachesListenBrainzOnceThoughTheServerIsKilled() async throws {
        let seed = KillTests.seed()
        let dir = try TemporaryDirectory()
        let fake = try Child(try KillTests.executable("fake-listenbrainz"), ["--port", "0"], marker: "fake ListenBrainz listening at ",
                             output: \.standardOutput)
        let root = try await fake.serving()
        var environment = ProcessInfo.processInfo.environment
        environment["LISTENBRAINZ_API_URL"] = root
        environment["LASTFM_API_SECRET"] = nil
        environment["DATABASE_URL"] = nil
        // The demo's household, whose "me" is `demo`.
        let server = Server(binary: try KillTests.executable(), data: dir.url.appendingPathComponent("data").path, environment: environment,
                            arguments: ["--demo"])
        let http = Self.client()
        do {
            let first = try await server.start()
            // Forwarding to ListenBrainz as rob.
            let (token, cookie, csrf) = try await Self.token(http, first.1, cookie: nil)
            let (on, _) = try await Fleet.send(http, first.1 + "/settings/forwarding", method: .POST, cookie: cookie,
                                               form: "csrf=\(csrf)&listenbrainz-token=test-token")
            #expect(on.status == .seeOther)
            // ListenBrainz keeps each batch, then answers 300 ms later.
            try await Self.post(http, root + "/test/faults", #"{"fault":{"delay":{"milliseconds":300}},"endpoint":"submit-listens"}"#)

            let (accepted, last) = try await Self.killWhileForwarding(http, server, first: first, token: token, seed: seed)
            // An event: the fake answers once it keeps them all.
            let done = try await ConcurrentServeTests.execute(http, HTTPClientRequest(url: root + "/test/kept?count=\(accepted.count)"), timeout: nil)
            #expect(done.status == .noContent)
            try await Self.outboxSettles(http, last.1, cookie: nil, count: accepted.count, seed: seed)
            let answer = try await ConcurrentServeTests.execute(http, HTTPClientRequest(url: root + "/test/received"))
            let received = try JSONDecoder().decode(Received.self, from: Data(try await answer.body.collect(upTo: 4 << 20).readableBytesView))
            // Counted as they arrived, repeats included: not just kept once by ListenBrainz's own rule.
            #expect(received.listensReceived == accepted.count, "seed \(seed)")
            Self.expectOnce(received.listens.map(\.listen.track), accepted, seed: seed)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        _ = fake
    }
}

/// A small seeded generator, so a failing run's kill moments can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
