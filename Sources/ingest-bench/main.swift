import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

// Listens per second a running `vinylogue serve` accepts on its
// ListenBrainz-compatible API, and how soon they show in a chart.
//
//   ingest-bench --url http://127.0.0.1:8080 --lastfm http://127.0.0.1:8765 [--label SQLite]
//                [--seconds 10] [--clients 64] [--batch-clients 4]
//
// The server signs people in with Last.fm (the local fake at --lastfm, whose
// generated "listener1" … people exist): each client is one person, signed
// in as a browser would (approval form, session cookie), with their own
// listen token made on the settings page. Then, for --seconds each:
//   1. single listens (`listen_type: single`), one client per person, each
//      person's listens a second apart, as a player sends them;
//   2. imports of 1,000 listens (a player's backlog, 3 minutes apart, going
//      back from a month ago), --batch-clients people at once;
//   3. 200 single listens one at a time, each on an album of its own and
//      followed at once by a read of the week's album chart
//      (`/api/u/{name}/chart`), timing from the 200 to a chart that has it.
// Prints listens per second and p50 / p99 latency of each.
//
// With --tokens-out FILE it only signs the people in and writes their tokens
// there; with --tokens-in FILE it uses those and skips phase 1, which
// `scripts/bench-ingest` has wrk do (`scripts/bench-ingest-singles.lua`).

struct Options {
    var url = ""
    var lastFM = ""
    var label = "server"
    var seconds = 10.0
    var clients = 64
    var batchClients = 4
    /// Where to write the signed-in people's tokens (one per line) and stop,
    /// for a load generator of another kind (`scripts/bench-ingest` hands
    /// them to wrk); `nil`: run every phase here.
    var tokensOut: String?
    /// Tokens written by an earlier `--tokens-out` run (tokens cannot be
    /// made twice: a new one replaces the old); then phase 1 is skipped.
    var tokensIn: String?
}

var parsed = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--url": parsed.url = arguments.popFirst() ?? ""
    case "--lastfm": parsed.lastFM = arguments.popFirst() ?? ""
    case "--label": parsed.label = arguments.popFirst() ?? parsed.label
    case "--seconds": parsed.seconds = arguments.popFirst().flatMap(Double.init) ?? parsed.seconds
    case "--clients": parsed.clients = max(1, arguments.popFirst().flatMap(Int.init) ?? parsed.clients)
    case "--batch-clients": parsed.batchClients = max(1, arguments.popFirst().flatMap(Int.init) ?? parsed.batchClients)
    case "--tokens-out": parsed.tokensOut = arguments.popFirst()
    case "--tokens-in": parsed.tokensIn = arguments.popFirst()
    default:
        FileHandle.standardError.write(Data("usage: ingest-bench --url http://host:port --lastfm http://host:port [--label NAME] [--seconds S] [--clients N] [--batch-clients N] [--tokens-out FILE | --tokens-in FILE]\n".utf8))
        exit(2)
    }
}
let options = parsed
guard !options.url.isEmpty, !options.lastFM.isEmpty else {
    FileHandle.standardError.write(Data("ingest-bench: --url (a running `vinylogue serve` that signs in with Last.fm) and --lastfm (its fake Last.fm) are required\n".utf8))
    exit(2)
}

struct BenchFailure: Error, CustomStringConvertible { let description: String }

/// Latencies in seconds, summarised.
struct Latencies {
    var samples: [Double] = []
    mutating func add(_ seconds: Double) { samples.append(seconds) }
    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }
    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
}

final class Bench: Sendable {
    let http: HTTPClient
    let base: String

    init(base: String, connections: Int) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        configuration.timeout.connect = .seconds(5)
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: String? = nil) async throws -> (Int, String, HTTPHeaders) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), String(buffer: bytes), response.headers)
    }

    static func cookie(_ name: String, in headers: HTTPHeaders) -> String? {
        for line in headers["Set-Cookie"] where line.hasPrefix(name + "=") {
            return String(line.dropFirst(name.count + 1).prefix { $0 != ";" })
        }
        return nil
    }

    /// Signs in as `name` through the fake Last.fm's approval form, as a
    /// browser would, and makes a listen token on the settings page.
    func token(of name: String, lastFM: String) async throws -> String {
        let (_, _, start) = try await send(.GET, "/signin")
        guard let location = start["Location"].first, let approval = URLComponents(string: location),
              let callback = approval.queryItems?.first(where: { $0.name == "cb" })?.value,
              let nonce = Self.cookie("vinylogue_signin", in: start) else { throw BenchFailure(description: "/signin did not send to Last.fm") }
        var approve = HTTPClientRequest(url: lastFM + "/api/auth/")
        approve.method = .POST
        approve.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        approve.body = .bytes(ByteBuffer(string: "api_key=test-key&cb=\(callback.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&user=\(name)"))
        let approved = try await http.execute(approve, timeout: .seconds(30))
        guard let back = approved.headers["Location"].first, let path = URLComponents(string: back).map({ $0.path + "?" + ($0.query ?? "") }) else {
            throw BenchFailure(description: "the fake Last.fm did not approve \(name)")
        }
        let (_, _, signedIn) = try await send(.GET, path, headers: [("Cookie", "vinylogue_signin=\(nonce)")])
        guard let session = Self.cookie("vinylogue_session", in: signedIn) else { throw BenchFailure(description: "\(name) was not signed in") }
        let (_, _, settings) = try await send(.GET, "/settings", headers: [("Cookie", "vinylogue_session=\(session)")])
        guard let csrf = Self.cookie("vinylogue_csrf", in: settings) else { throw BenchFailure(description: "the settings page set no CSRF cookie") }
        let (status, page, _) = try await send(.POST, "/settings/listen-token",
                                               headers: [("Cookie", "vinylogue_session=\(session); vinylogue_csrf=\(csrf)"),
                                                         ("Content-Type", "application/x-www-form-urlencoded")],
                                               body: "csrf=\(csrf)")
        guard status == 200, let shown = page.range(of: "<code class=\"listen-token\">") else {
            throw BenchFailure(description: "making \(name)'s token answered \(status)")
        }
        return String(page[shown.upperBound...].prefix(64))
    }

    static func listen(_ instant: Int64, track: String, album: String = "Bench Album") -> String {
        #"{"listened_at":\#(instant),"track_metadata":{"artist_name":"Bench Artist","track_name":"\#(track)","release_name":"\#(album)"}}"#
    }

    func submit(_ type: String, _ listens: [String], token: String) async throws {
        let body = #"{"listen_type":"\#(type)","payload":[\#(listens.joined(separator: ","))]}"#
        let (status, answer, _) = try await send(.POST, "/1/submit-listens",
                                                 headers: [("Authorization", "Token \(token)"), ("Content-Type", "application/json")], body: body)
        guard status == 200 else { throw BenchFailure(description: "submit-listens answered \(status): \(answer.prefix(200))") }
    }

    /// Runs `clients` loops for `seconds`, each calling `work(client, n)`
    /// with its own counter; returns the latencies of every call.
    func load(clients: Int, seconds: Double, _ work: @escaping @Sendable (Int, Int) async throws -> Void) async throws -> Latencies {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for client in 0..<clients {
                group.addTask {
                    var samples: [Double] = []
                    var n = 0
                    while ContinuousClock.now < end {
                        let start = ContinuousClock.now
                        try await work(client, n)
                        let took = ContinuousClock.now - start
                        samples.append(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
                        n += 1
                    }
                    return samples
                }
            }
            var all = Latencies()
            for try await samples in group { all.samples += samples }
            return all
        }
    }
}

let bench = Bench(base: options.url, connections: options.clients + 8)
do {
    let people = max(options.clients, options.batchClients) + 1
    var tokens: [String] = []
    if let file = options.tokensIn {
        tokens = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        guard tokens.count >= people else { throw BenchFailure(description: "\(file) holds \(tokens.count) tokens; \(people) are needed") }
    } else {
        for n in 1...people { tokens.append(try await bench.token(of: "listener\(n)", lastFM: options.lastFM)) }
    }
    if let file = options.tokensOut {
        try (tokens.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        exit(0)
    }
    let signedIn = tokens
    let now = Int64(Date().timeIntervalSince1970)
    let run = UUID().uuidString.prefix(8)
    let label = options.label

    // 1. Single listens: each person's a second apart, from an hour ago
    // (unless another load generator sent them).
    if options.tokensIn == nil {
        let singles = try await bench.load(clients: options.clients, seconds: options.seconds) { client, n in
            try await bench.submit("single", [Bench.listen(now - 3600 + Int64(n), track: "\(run) s\(n)")], token: signedIn[client])
        }
        print("\(label): single listens, \(options.clients) people at once: \(Int(Double(singles.samples.count) / options.seconds)) listens/s "
              + "(\(singles.samples.count) in \(Int(options.seconds)) s), p50 \(Latencies.ms(singles.percentile(0.5))), p99 \(Latencies.ms(singles.percentile(0.99)))")
    }

    // 2. Imports of 1,000: each person's backlog, going back from a month ago.
    let batches = try await bench.load(clients: options.batchClients, seconds: options.seconds) { client, n in
        let newest = now - 30 * 86_400 - Int64(n) * 1000 * 180
        let listens = (0..<1000).map { i in Bench.listen(newest - Int64(i) * 180, track: "\(run) b\(n)-\(i % 40)", album: "Backlog \(i % 12)") }
        try await bench.submit("import", listens, token: signedIn[client])
    }
    let batchRate = Double(batches.samples.count * 1000) / options.seconds
    print("\(label): imports of 1,000, \(options.batchClients) people at once: \(Int(batchRate)) listens/s "
          + "(\(batches.samples.count) imports), p50 \(Latencies.ms(batches.percentile(0.5))), p99 \(Latencies.ms(batches.percentile(0.99)))")

    // 3. In the chart after the 200: the last person, an album per listen.
    var visible = Latencies()
    let week = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
    let probe = "listener\(people)"
    for i in 0..<200 {
        let album = "\(run) Probe \(i)"
        try await bench.submit("single", [Bench.listen(now - 600 + Int64(i), track: "Probe \(i)", album: album)], token: signedIn[people - 1])
        let answered = ContinuousClock.now
        while true {
            let (status, chart, _) = try await bench.send(.GET, "/api/u/\(probe)/chart?week=\(week)&kind=album&min_plays=0")
            guard status == 200 else { throw BenchFailure(description: "the chart answered \(status): \(chart.prefix(200))") }
            if chart.contains(album) { break }
            if ContinuousClock.now - answered > .seconds(5) { throw BenchFailure(description: "listen \(i) was not in the chart 5 s after its 200") }
        }
        let took = ContinuousClock.now - answered
        visible.add(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
    }
    print("\(label): in the chart after the 200: p50 \(Latencies.ms(visible.percentile(0.5))), p99 \(Latencies.ms(visible.percentile(0.99))), "
          + "max \(Latencies.ms(visible.percentile(1))) (200 listens; target ≤ 100 ms)")
} catch {
    FileHandle.standardError.write(Data("ingest-bench: \(error)\n".utf8))
    exit(1)
}
