import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import VinylogueCore

/// The real `vinylogue serve` under concurrent cold requests, against the
/// real `fake-lastfm`, each in its own process: a server that deadlocks
/// shows here as requests that time out, without hanging the test run.
///
/// Failed before the fix: pages read the archive synchronously on Swift's
/// cooperative threads (two on this machine) while every pooled SQLite
/// reader was taken, so about ten concurrent pages stopped the server for
/// good and `/healthz` never answered again.
@Suite struct ConcurrentServeTests {
    /// A child process, stopped when the test ends.
    final class Child: Sendable {
        let process: Process

        init(_ binary: URL, _ arguments: [String], environment: [String: String]? = nil) throws {
            process = Process()
            process.executableURL = binary
            process.arguments = arguments
            if let environment { process.environment = environment }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    /// A port nothing listens on now, from the kernel.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func get(_ http: HTTPClient, _ url: String, within seconds: Int64) async throws -> Int {
        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(seconds))
        _ = try await response.body.collect(upTo: 4 << 20)
        return Int(response.status.code)
    }

    /// Asks `/healthz` until it answers (the server is starting).
    static func waitUntilServing(_ http: HTTPClient, _ base: String, _ child: Child) async throws {
        for _ in 0..<600 {
            if (try? await get(http, base + "/healthz", within: 2)) == 200 { return }
            guard child.process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the server did not start")
        throw CancellationError()
    }

    /// One request as `fake-lastfm`'s `/_fake/requests` lists it.
    struct UpstreamRequest: Decodable {
        let method: String
        let parameters: [String: String]
        let received: Double
    }

    static func upstreamRequests(_ http: HTTPClient, _ lastFM: String) async throws -> [UpstreamRequest] {
        let response = try await http.execute(HTTPClientRequest(url: lastFM + "/_fake/requests"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return try JSONDecoder().decode([UpstreamRequest].self, from: Data(body.readableBytesView))
    }

    /// A page's status and whether it says Last.fm is still being waited for.
    static func page(_ http: HTTPClient, _ url: String) async throws -> (status: Int, waiting: Bool) {
        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = String(buffer: try await response.body.collect(upTo: 4 << 20))
        return (Int(response.status.code), body.contains("Last.fm is slow to answer right now"))
    }

    /// The server at Last.fm's real pace (5 requests a second): every page
    /// answers, in time (a full chart, or — once its 7 s patience is up — a
    /// page saying Last.fm is slow, its fetch carrying on), `/healthz`
    /// answers throughout, and Last.fm sees at most 5 requests in any
    /// second and never the same request twice.
    @Test func fiftyConcurrentColdPagesAllAnswerAndHealthStaysUp() async throws {
        let dir = try TemporaryDirectory()
        let lastFMPort = try Self.freePort(), port = try Self.freePort()
        // 8 July 2023, as the other process-level tests.
        let fake = try Child(try KillTests.executable("fake-lastfm"), ["--port", String(lastFMPort), "--now", "1688800000"])
        var environment = ProcessInfo.processInfo.environment
        environment["LASTFM_API_URL"] = "http://127.0.0.1:\(lastFMPort)/2.0/"
        environment["LASTFM_API_KEY"] = "test-key"
        environment["LASTFM_REQUESTS_PER_SECOND"] = nil
        let serving = try Child(try KillTests.executable(), ["serve", "--port", String(port), "--data-dir", dir.url.path, "--demo"],
                                environment: environment)
        defer { _ = fake; _ = serving }

        // One connection per request, as 50 browsers would have: the
        // client's default of 8 per host would queue /healthz behind pages.
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let base = "http://127.0.0.1:\(port)", lastFM = "http://127.0.0.1:\(lastFMPort)"
        do {
            try await Self.waitUntilServing(http, base, serving)
            // Wait for the fake Last.fm too, then forget that question.
            for _ in 0..<600 where (try? await Self.get(http, "\(lastFM)/2.0/?method=user.getinfo&user=RJ&api_key=test-key&format=json", within: 2)) != 200 {
                try await Task.sleep(for: .milliseconds(100))
            }
            var clear = HTTPClientRequest(url: lastFM + "/_fake/requests")
            clear.method = .DELETE
            _ = try await http.execute(clear, timeout: .seconds(10))
            // 50 different cold weeks of a Last.fm user, then one week 50 times,
            // then 50 pages of the archived demo user.
            let weeks = (0..<50).map { n in "\(base)/u/RJ/week/\(2010 + n / 12)-\(String(format: "%02d", n % 12 + 1))-10" }
            let same = Array(repeating: "\(base)/u/RJ/week/2015-06-10", count: 50)
            let archived = (1...50).map { n in "\(base)/u/demo?years_ago=\(n % 10 + 1)" }
            var waitedFor: Set<String> = []
            for batch in [weeks, same, archived] {
                let pages = try await withThrowingTaskGroup(of: (String, Int, Bool).self) { group in
                    for url in batch { group.addTask { let page = try await Self.page(http, url); return (url, page.status, page.waiting) } }
                    // /healthz answers while the pages load.
                    group.addTask { (base + "/healthz", try await Self.get(http, base + "/healthz", within: 1), false) }
                    return try await group.reduce(into: [(String, Int, Bool)]()) { $0.append($1) }
                }
                #expect(pages.count == batch.count + 1)
                for (url, status, waiting) in pages where status != 200 {
                    #expect(status == 503 && waiting, "\(url): \(status)")
                    waitedFor.insert(url)
                }
            }
            #expect(try await Self.get(http, base + "/healthz", within: 1) == 200)
            // Pages that said Last.fm was slow are complete once their fetches
            // are: a reload joins the fetch still under way or reads its answer.
            for url in waitedFor.sorted() {
                var page = try await Self.page(http, url)
                while page.status == 503 && page.waiting { page = try await Self.page(http, url) }
                #expect(page.status == 200, "\(url)")
            }
            let upstream = try await Self.upstreamRequests(http, lastFM)
            let asked = upstream.map { "\($0.method) \($0.parameters.filter { $0.key != "api_key" }.sorted { $0.key < $1.key })" }
            #expect(Set(asked).count == asked.count, "duplicates: \(Dictionary(grouping: asked) { $0 }.filter { $1.count > 1 }.keys)")
            // At most 5 in any one-second window: any 6 arrivals span a second.
            let arrivals = upstream.map(\.received).sorted()
            if arrivals.count > 5 {
                let tightest = (5..<arrivals.count).map { arrivals[$0] - arrivals[$0 - 5] }.min() ?? 1
                #expect(tightest >= 0.99, "6 requests within \(tightest) s")
            }
            #expect(upstream.count >= 50)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}
