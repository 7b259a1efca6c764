import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing
import TestSupport
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
    /// A child process, stopped when the test ends, started with port 0
    /// and read until it prints the line saying where it listens: the test
    /// waits for that event, not for a port to start answering.
    final class Child: Sendable {
        let process: ChildProcess
        let readiness: Task<String, any Error>

        /// Starts `binary`, whose `output` (standard output or error) will
        /// carry a line starting with `marker` and then the URL it serves.
        init(_ binary: URL, _ arguments: [String], environment: [String: String]? = nil,
             marker: String, output: KeyPath<ChildProcess, Any?>) throws {
            process = ChildProcess()
            process.executableURL = binary
            process.arguments = arguments
            if let environment { process.environment = environment }
            let pipe = Pipe()
            if output == \ChildProcess.standardError {
                process.standardError = pipe
                process.standardOutput = FileHandle.nullDevice
            } else {
                process.standardOutput = pipe
                process.standardError = FileHandle.nullDevice
            }
            let lines = AsyncStream<String> { continuation in
                let pending = Mutex(Data())
                pipe.fileHandleForReading.readabilityHandler = { handle in
                    let chunk = handle.availableData
                    if chunk.isEmpty {
                        handle.readabilityHandler = nil
                        continuation.finish()
                        return
                    }
                    for line in pending.withLock({ buffer in
                        buffer.append(chunk)
                        var complete: [String] = []
                        while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                            complete.append(String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self))
                            buffer.removeSubrange(buffer.startIndex...end)
                        }
                        return complete
                    }) { continuation.yield(line) }
                }
            }
            readiness = Task {
                for await line in lines {
                    guard let start = line.range(of: marker) else { continue }
                    return String(line[start.upperBound...].prefix { !$0.isWhitespace })
                }
                throw CocoaError(.executableLoad)  // it ended without saying it serves
            }
            try process.run()
        }

        /// The URL it prints once it listens; fails when it exits first or
        /// stays silent for 10 s.
        func serving() async throws -> String {
            switch await readiness.result(within: .seconds(10)) {
            case .success(let url): return url
            case .failure:
                Issue.record("\(process.executableURL?.lastPathComponent ?? "") exited before it served")
                throw CancellationError()
            case nil:
                Issue.record("\(process.executableURL?.lastPathComponent ?? "") did not say it serves within 10 s")
                throw CancellationError()
            }
        }

        /// The exit status, once the process ends (an event, not a poll).
        func exit() -> Task<Int32, Never> {
            let process = self.process
            return Task {
                await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
                    let once = Mutex(false)
                    let finish: @Sendable (ChildProcess) -> Void = { ended in
                        if once.withLock({ let first = !$0; $0 = true; return first }) { done.resume(returning: ended.terminationStatus) }
                    }
                    process.terminationHandler = finish
                    if !process.isRunning { finish(process) }
                }
            }
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    static func get(_ http: HTTPClient, _ url: String, within seconds: Int64) async throws -> Int {
        let response = try await execute(http, HTTPClientRequest(url: url), timeout: seconds)
        _ = try await response.body.collect(upTo: 4 << 20)
        return Int(response.status.code)
    }

    /// One request as `fake-lastfm`'s `/_fake/requests` lists it.
    struct UpstreamRequest: Decodable {
        let method: String
        let parameters: [String: String]
        let received: Double
    }

    static func upstreamRequests(_ http: HTTPClient, _ lastFM: String) async throws -> [UpstreamRequest] {
        let response = try await execute(http, HTTPClientRequest(url: lastFM + "/_fake/requests"))
        let body = try await response.body.collect(upTo: 16 << 20)
        return try JSONDecoder().decode([UpstreamRequest].self, from: Data(body.readableBytesView))
    }

    /// `request`, sent again once when the server closed the kept-alive
    /// connection just as it was reused (its idle timer and the new request
    /// crossed; no answer was started), as browsers do for such requests.
    /// With `timeout` nil it has no deadline of its own: for a long poll
    /// that answers at an event, in a suite with a `.timeLimit`.
    static func execute(_ http: HTTPClient, _ request: HTTPClientRequest, timeout seconds: Int64? = 10) async throws -> HTTPClientResponse {
        let deadline = seconds.map { NIODeadline.now() + .seconds($0) } ?? .distantFuture
        do {
            return try await http.execute(request, deadline: deadline)
        } catch let error where (error as? ChannelError) == .ioOnClosedChannel || (error as? HTTPClientError) == .remoteConnectionClosed
                    || (error as? IOError)?.errnoCode == ECONNRESET {
            // A kept-alive connection the server closed on its idle timer
            // as the request went out (seen as a closed channel, or as a
            // reset on the read): sent again once, as browsers do.
            return try await http.execute(request, deadline: seconds.map { NIODeadline.now() + .seconds($0) } ?? .distantFuture)
        }
    }

    static func page(_ http: HTTPClient, _ url: String) async throws -> (status: Int, waiting: Bool) {
        let response = try await execute(http, HTTPClientRequest(url: url))
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
        // 8 July 2023, as the other process-level tests.
        let fake = try Child(try KillTests.executable("fake-lastfm"), ["--port", "0", "--now", "1688800000"],
                             marker: "fake Last.fm listening at ", output: \.standardOutput)
        let lastFMAPI = try await fake.serving()
        var environment = ProcessInfo.processInfo.environment
        environment["LASTFM_API_URL"] = lastFMAPI
        environment["LASTFM_API_KEY"] = "test-key"
        environment["LASTFM_REQUESTS_PER_SECOND"] = nil
        let serving = try Child(try KillTests.executable(), ["serve", "--port", "0", "--data-dir", dir.url.path, "--demo"],
                                environment: environment, marker: "Vinylogue is serving at ", output: \.standardError)
        defer { _ = fake; _ = serving }

        // Before the client: one left without its shutdown (when the server
        // does not start) stops the whole test process in its deinit.
        let base = String(try await serving.serving().dropLast()), lastFM = String(lastFMAPI.dropLast("/2.0/".count))
        // One connection per request, as 50 browsers would have: the
        // client's default of 8 per host would queue /healthz behind pages.
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            var clear = HTTPClientRequest(url: lastFM + "/_fake/requests")
            clear.method = .DELETE
            _ = try await Self.execute(http, clear)
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
