import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresStore
import Stores
import Synchronization
import Testing
import TestSupport
import VinylogueCore

/// Three real `vinylogue serve` processes on one PostgreSQL database and
/// one API key, against the real `fake-lastfm`: 200 concurrent cold chart
/// views over 50 (user, week) pairs spread across them. Together they keep
/// to Last.fm's 5 requests a second and ask it each thing at most once; a
/// person who signs in on one is signed in on another; one killed with
/// SIGKILL midway loses nothing and the others keep answering.
@Suite struct FleetProcessTests {
    typealias Child = ConcurrentServeTests.Child

    /// The `Set-Cookie` value of `name` in `response`.
    static func cookie(_ name: String, in response: HTTPClientResponse) -> String? {
        for line in response.headers["set-cookie"] where line.hasPrefix(name + "=") {
            return String(line.dropFirst(name.count + 1).prefix { $0 != ";" })
        }
        return nil
    }

    static func send(_ http: HTTPClient, _ url: String, method: HTTPMethod = .GET, cookie: String? = nil,
                     form: String? = nil) async throws -> (HTTPClientResponse, String) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        let response = try await ConcurrentServeTests.execute(http, request)
        let body = String(buffer: try await response.body.collect(upTo: 4 << 20))
        return (response, body)
    }

    /// Signs in as `user` on the instance at `base`, through the fake's
    /// approval form, as a browser would; returns the session cookie.
    static func signIn(_ http: HTTPClient, _ base: String, lastFM: String, as user: String) async throws -> String {
        let (start, _) = try await send(http, base + "/signin")
        #expect(start.status == .found)
        let location = try #require(start.headers.first(name: "location"))
        let approval = try #require(URLComponents(string: location))
        let callback = try #require(approval.queryItems?.first { $0.name == "cb" }?.value)
        let nonce = try #require(cookie("vinylogue_signin", in: start))
        let form = "api_key=test-key&cb=\(callback.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&user=\(user)"
        let (approved, _) = try await send(http, lastFM + "/api/auth/", method: .POST, form: form)
        #expect(approved.status == .found)
        let back = try #require(approved.headers.first(name: "location"))
        let (signedIn, _) = try await send(http, back, cookie: "vinylogue_signin=\(nonce)")
        #expect(signedIn.status == .seeOther)
        let token = try #require(cookie("vinylogue_session", in: signedIn))
        return "vinylogue_session=" + token
    }

    @Test func threeInstancesShareOneBudgetOneFetchAndTheSessions() async throws {
        let cluster = try TestCluster.url()
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { databaseURL in
            let dir = try TemporaryDirectory()
            // 8 July 2023, as the other process-level tests.
            // Mika and Noor: generated Last.fm users with four weeks each
            // (a few pages of recent tracks), who sign in during the views.
            let now: Int64 = 1_688_800_000, start = now - 4 * LastFMWeekCalendar.weekLength
            let people = [("Mika", UInt64(11)), ("Noor", UInt64(12))]
            let fake = try Child(try KillTests.executable("fake-lastfm"),
                                 ["--port", "0", "--now", String(now)] + people.flatMap { ["--user", "\($0.0)=\($0.1)@\(start)"] },
                                 marker: "fake Last.fm listening at ", output: \.standardOutput)
            let lastFMAPI = try await fake.serving()
            let lastFM = String(lastFMAPI.dropLast("/2.0/".count))
            var environment = ProcessInfo.processInfo.environment
            environment["LASTFM_API_URL"] = lastFMAPI
            environment["LASTFM_API_KEY"] = "test-key"
            environment["LASTFM_API_SECRET"] = "test-secret"
            environment["LASTFM_AUTH_URL"] = lastFM + "/api/auth/"
            environment["LASTFM_REQUESTS_PER_SECOND"] = nil
            environment["DATABASE_URL"] = databaseURL
            var instances: [Child] = []
            var serving: [String] = []
            for n in 1...3 {
                let instance = try Child(try KillTests.executable(),
                                         ["serve", "--port", "0", "--data-dir", dir.url.appendingPathComponent("instance\(n)").path],
                                         environment: environment, marker: "Vinylogue is serving at ", output: \.standardError)
                serving.append(String(try await instance.serving().dropLast()))
                instances.append(instance)
            }
            let bases = serving
            defer { _ = fake; _ = instances }

            var clientConfiguration = HTTPClient.Configuration()
            clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
            clientConfiguration.redirectConfiguration = .disallow
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
            do {
                var clear = HTTPClientRequest(url: lastFM + "/_fake/requests")
                clear.method = .DELETE
                _ = try await ConcurrentServeTests.execute(http, clear)

                // 50 (user, week) pairs, each viewed 4 times, across the instances.
                let pairs = (0..<25).flatMap { n in ["RJ", "demo"].map { "/u/\($0)/week/\(2010 + n / 12)-\(String(format: "%02d", n % 12 + 1))-10" } }
                let latencies = Timings()
                func view(_ base: String, _ path: String) async throws -> Int {
                    let started = ContinuousClock.now
                    var page = try await ConcurrentServeTests.page(http, base + path)
                    // A page that waited 7 s for Last.fm says so; reloading
                    // joins the fetch still under way.
                    while page.status == 503 && page.waiting { page = try await ConcurrentServeTests.page(http, base + path) }
                    let took = ContinuousClock.now - started
                    latencies.values.withLock { $0.append(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18) }
                    return page.status
                }
                func batch(_ views: [(String, String)]) async throws -> [Int] {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for (base, path) in views { group.addTask { try await view(base, path) } }
                        return try await group.reduce(into: [Int]()) { $0.append($1) }
                    }
                }
                // Two people sign in at once, on two instances, while the
                // first 100 views are served: each sign-in starts a copy.
                async let mikaSignsIn = Self.signIn(http, bases[0], lastFM: lastFM, as: "Mika")
                async let noorSignsIn = Self.signIn(http, bases[2], lastFM: lastFM, as: "Noor")
                let first = try await batch((0..<100).map { (bases[$0 % 3], pairs[$0 % 50]) })
                #expect(first.allSatisfy { $0 == 200 }, "\(first.filter { $0 != 200 })")
                let session = try await mikaSignsIn
                _ = try await noorSignsIn
                // Signed in on the first instance, seen on the third.
                let (_, home) = try await Self.send(http, bases[2] + "/", cookie: session)
                #expect(home.contains("Signed in with Last.fm as <strong>Mika</strong>"), "\(home.prefix(2000))")

                // SIGKILL the second instance midway; the others take its views.
                kill(instances[1].process.processIdentifier, SIGKILL)
                #expect(await instances[1].exit().value(within: .seconds(10)) != nil)
                // What Last.fm was asked until then: a fetch the killed
                // instance had under way was lost with it, and another
                // instance may rightly ask for it again (once).
                let key = { (r: ConcurrentServeTests.UpstreamRequest) in "\(r.method) \(r.parameters.filter { $0.key != "api_key" }.sorted { $0.key < $1.key })" }
                let askedBeforeTheKill = Set(try await ConcurrentServeTests.upstreamRequests(http, lastFM).map(key))
                let second = try await batch((100..<200).map { (bases[$0 % 2 == 0 ? 0 : 2], pairs[$0 % 50]) })
                #expect(second.allSatisfy { $0 == 200 }, "\(second.filter { $0 != 200 })")

                // Nothing was lost: the session still works on both.
                for base in [bases[0], bases[2]] {
                    let (_, list) = try await Self.send(http, base + "/", cookie: session)
                    #expect(list.contains("as <strong>Mika</strong>"), "\(base)")
                }

                // Both copies finish (an event the database records; 10 s at
                // most once the views are done), each page of each asked once.
                try await PostgresDatabase.with(url: databaseURL) { database in
                    let copies = PostgresHistoryCopyStore(database), archive = PostgresScrobbleStore(database)
                    for (name, seed) in people {
                        let user = try Username(name)
                        let deadline = ContinuousClock.now + .seconds(10)
                        var copy = try await copies.copy(of: user)
                        while copy?.state != .done, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(100))
                            copy = try await copies.copy(of: user)
                        }
                        #expect(copy?.state == .done, "\(name)'s copy: \(String(describing: copy))")
                        #expect(try await archive.scrobbleCount(of: user) == DemoHistory(seed: seed, start: start).listensThatCount(upTo: now), "\(name)")
                    }
                }

                let upstream = try await ConcurrentServeTests.upstreamRequests(http, lastFM)
                let asked = upstream.map(key)
                let twice = Dictionary(grouping: asked) { $0 }.filter { $1.count > 1 }
                #expect(twice.allSatisfy { askedBeforeTheKill.contains($0.key) && $0.value.count == 2 }, "asked twice: \(twice.keys)")
                // Every page's own week was fetched: RJ's 25, and demo's 13 from
                // January 2011 (its history starts then). Fetches of the year
                // before, made in the background, may or may not have happened yet.
                #expect(upstream.filter { $0.method == "user.getweeklyalbumchart" }.count >= 38)
                let arrivals = upstream.map(\.received).sorted()
                if arrivals.count > 5 {
                    let tightest = (5..<arrivals.count).map { arrivals[$0] - arrivals[$0 - 5] }.min() ?? 1
                    #expect(tightest >= 0.99, "6 requests within \(tightest) s")
                }
                for (name, _) in people {
                    let pages = upstream.filter { $0.method == "user.getrecenttracks" && $0.parameters["user"]?.lowercased() == name.lowercased() }
                    #expect(!pages.isEmpty, "\(name) was not copied")
                    let asked = pages.map { "\($0.parameters.filter { $0.key != "api_key" }.sorted { $0.key < $1.key })" }
                    #expect(Set(asked).count == asked.count, "\(name)'s pages asked twice")
                }
                let sorted = latencies.values.withLock { $0 }.sorted()
                let p50 = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
                print("FleetProcessTests: \(upstream.count) requests to Last.fm for 200 views and two copies; \(Set(asked).count) distinct; "
                      + "views p50 \(Int(p50 * 1000)) ms, p99 \(Int(p99 * 1000)) ms")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    /// How long each view took, from every task that serves one.
    final class Timings: Sendable {
        let values = Mutex<[Double]>([])
    }
}
