import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import VinylogueCore

/// A real `vinylogue serve` forwarding to the real `fake-lastfm`, killed
/// with SIGKILL at random moments while it forwards (Last.fm made slow, so
/// kills land between Last.fm taking a batch and the outbox hearing so),
/// and started again each time on the same data directory. In the end
/// every listen the server accepted reached Last.fm exactly once.
@Suite struct ForwardingKillTests {
    typealias Child = ConcurrentServeTests.Child
    typealias Fleet = FleetProcessTests

    struct Received: Decodable {
        let instant: Int64
        let track: String
    }

    @Test func everyAcceptedListenReachesLastFMOnceThoughTheServerIsKilled() async throws {
        let seed = KillTests.seed()
        var random = SplitMix(seed: seed)
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
        let data = dir.url.appendingPathComponent("data").path
        let binary = try KillTests.executable()
        func start() async throws -> (Child, String) {
            let server = try Child(binary, ["serve", "--port", "0", "--data-dir", data], environment: environment,
                                   marker: "Vinylogue is serving at ", output: \.standardError)
            return (server, String(try await server.serving().dropLast()))
        }

        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var (server, base) = try await start()
        do {
            // Signed in as RJ, forwarding to Last.fm on, a listen token.
            let session = try await Fleet.signIn(http, base, lastFM: lastFM, as: "RJ")
            let (settings, _) = try await Fleet.send(http, base + "/settings", cookie: session)
            let csrf = try #require(Fleet.cookie("vinylogue_csrf", in: settings))
            let cookie = "\(session); vinylogue_csrf=\(csrf)"
            let (on, _) = try await Fleet.send(http, base + "/settings/forwarding", method: .POST, cookie: cookie, form: "csrf=\(csrf)&lastfm=on")
            #expect(on.status == .seeOther)
            let (_, page) = try await Fleet.send(http, base + "/settings/listen-token", method: .POST, cookie: cookie, form: "csrf=\(csrf)")
            let shown = try #require(page.range(of: "<code class=\"listen-token\">"))
            let token = String(page[shown.upperBound...].prefix(64))
            // Last.fm takes each batch, then answers 300 ms later.
            var slow = HTTPClientRequest(url: lastFM + "/_fake/faults")
            slow.method = .POST
            slow.body = .bytes(ByteBuffer(string: #"{"fault":{"delay":{"milliseconds":300}},"method":"track.scrobble"}"#))
            _ = try await ConcurrentServeTests.execute(http, slow)

            let now = Int64(Date().timeIntervalSince1970)
            var accepted: [String] = []
            for round in 0..<6 {
                // 40 listens in imports of 10, each accepted (200) before the kill.
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
                kill(server.process.processIdentifier, SIGKILL)
                _ = await server.exit().value
                (server, base) = try await start()
            }
            // The last life sends what is left; Last.fm ends with every listen.
            let done = try await ConcurrentServeTests.execute(
                http, HTTPClientRequest(url: lastFM + "/_fake/scrobbled?user=RJ&count=\(accepted.count)"), timeout: 120)
            #expect(done.status == .noContent)
            // And the outbox agrees: nothing waits, nothing failed.
            var state = ""
            for _ in 0..<100 {
                (_, state) = try await Fleet.send(http, base + "/settings", cookie: session)
                if state.contains("\(accepted.count) sent,") && !state.contains(" waiting.") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(state.contains("\(accepted.count) sent,") && !state.contains(" waiting.") && !state.contains(" failed."), "seed \(seed)")
            let answer = try await ConcurrentServeTests.execute(http, HTTPClientRequest(url: lastFM + "/_fake/scrobbles"))
            let received = try JSONDecoder().decode([String: [Received]].self, from: Data(try await answer.body.collect(upTo: 4 << 20).readableBytesView))
            let tracks = (received["RJ"] ?? []).map(\.track)
            #expect(tracks.count == accepted.count, "seed \(seed): \(tracks.count) arrived for \(accepted.count) accepted")
            #expect(Set(tracks) == Set(accepted), "seed \(seed)")
            let twice = Dictionary(grouping: tracks, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            #expect(twice.isEmpty, "seed \(seed): sent twice: \(twice)")
            let asked = try await ConcurrentServeTests.upstreamRequests(http, lastFM).map(\.method)
            print("ForwardingKillTests: \(asked.filter { $0 == "track.scrobble" }.count) scrobble requests, "
                  + "\(asked.filter { $0 == "user.getrecenttracks" }.count) checks of what arrived")
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
