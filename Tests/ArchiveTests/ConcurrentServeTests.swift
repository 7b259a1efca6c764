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
    final class Child: @unchecked Sendable {
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

    @Test func fiftyConcurrentColdPagesAllAnswerAndHealthStaysUp() async throws {
        let dir = try TemporaryDirectory()
        let lastFMPort = try Self.freePort(), port = try Self.freePort()
        // 8 July 2023, as the other process-level tests.
        let fake = try Child(try KillTests.executable("fake-lastfm"), ["--port", String(lastFMPort), "--now", "1688800000"])
        var environment = ProcessInfo.processInfo.environment
        environment["LASTFM_API_URL"] = "http://127.0.0.1:\(lastFMPort)/2.0/"
        environment["LASTFM_API_KEY"] = "test-key"
        environment["LASTFM_REQUESTS_PER_SECOND"] = "50"
        let serving = try Child(try KillTests.executable(), ["serve", "--port", String(port), "--data-dir", dir.url.path, "--demo"],
                                environment: environment)
        defer { _ = fake; _ = serving }

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let base = "http://127.0.0.1:\(port)"
        do {
            try await Self.waitUntilServing(http, base, serving)
            // Wait for the fake Last.fm too (its chart list for RJ).
            for _ in 0..<600 where (try? await Self.get(http, "http://127.0.0.1:\(lastFMPort)/2.0/?method=user.getinfo&user=RJ&api_key=test-key&format=json", within: 2)) != 200 {
                try await Task.sleep(for: .milliseconds(100))
            }
            // 50 different cold weeks of a Last.fm user, then one week 50 times,
            // then 50 pages of the archived demo user.
            let weeks = (0..<50).map { n in "\(base)/u/RJ/week/\(2010 + n / 12)-\(String(format: "%02d", n % 12 + 1))-10" }
            let same = Array(repeating: "\(base)/u/RJ/week/2015-06-10", count: 50)
            let archived = (1...50).map { n in "\(base)/u/demo?years_ago=\(n % 10 + 1)" }
            for batch in [weeks, same, archived] {
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for url in batch { group.addTask { try await Self.get(http, url, within: 60) } }
                    // /healthz answers while the pages load.
                    group.addTask { try await Self.get(http, base + "/healthz", within: 10) }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.count == batch.count + 1)
                #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            }
            #expect(try await Self.get(http, base + "/healthz", within: 5) == 200)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}

