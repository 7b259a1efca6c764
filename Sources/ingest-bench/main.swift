import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

// Listens per second a running `vinylogue serve` accepts on its
// ListenBrainz-compatible API, and how soon they show in a chart.
//
//   ingest-bench --url http://127.0.0.1:8080 [--label SQLite] [--seconds 10] [--clients 64] [--batch-clients 4]
//
// Gets the household's token as a person would (the settings page's
// "Make a new token", with its CSRF cookie), then, for --seconds each:
//   1. single listens (`listen_type: single`) from --clients clients at once;
//   2. imports of 1,000 listens from --batch-clients clients at once;
//   3. 200 single listens one at a time, each followed at once by a read of
//      the current week's track chart (`/api/u/{me}/chart`), timing from the
//      200 to a chart that counts the listen.
// Prints listens per second and p50 / p99 latency of each. Every listen has
// its own track name, so none is a duplicate of another.

struct Options {
    var url = ""
    var label = "server"
    var seconds = 10.0
    var clients = 64
    var batchClients = 4
}

var parsed = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--url": parsed.url = arguments.popFirst() ?? ""
    case "--label": parsed.label = arguments.popFirst() ?? parsed.label
    case "--seconds": parsed.seconds = arguments.popFirst().flatMap(Double.init) ?? parsed.seconds
    case "--clients": parsed.clients = max(1, arguments.popFirst().flatMap(Int.init) ?? parsed.clients)
    case "--batch-clients": parsed.batchClients = max(1, arguments.popFirst().flatMap(Int.init) ?? parsed.batchClients)
    default:
        FileHandle.standardError.write(Data("usage: ingest-bench --url http://host:port [--label NAME] [--seconds S] [--clients N] [--batch-clients N]\n".utf8))
        exit(2)
    }
}
let options = parsed
guard !options.url.isEmpty else {
    FileHandle.standardError.write(Data("ingest-bench: --url is required (a running `vinylogue serve`)\n".utf8))
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

    /// The household's token, made on the settings page; and who "me" is.
    func token() async throws -> (token: String, me: String) {
        let (_, _, headers) = try await send(.GET, "/settings")
        guard let cookie = headers["Set-Cookie"].first(where: { $0.hasPrefix("vinylogue_csrf=") })?.split(separator: ";").first,
              let csrf = cookie.split(separator: "=").last else { throw BenchFailure(description: "the settings page set no CSRF cookie") }
        let (status, page, _) = try await send(.POST, "/settings/listen-token",
                                               headers: [("Cookie", String(cookie)), ("Content-Type", "application/x-www-form-urlencoded")],
                                               body: "csrf=\(csrf)")
        guard status == 200, let start = page.range(of: "<code class=\"listen-token\">") else {
            throw BenchFailure(description: "making a token answered \(status)")
        }
        let token = String(page[start.upperBound...].prefix(64))
        let (_, validation, _) = try await send(.GET, "/1/validate-token", headers: [("Authorization", "Token \(token)")])
        guard let object = try JSONSerialization.jsonObject(with: Data(validation.utf8)) as? [String: Any],
              let me = object["user_name"] as? String else { throw BenchFailure(description: "the token does not validate: \(validation)") }
        return (token, me)
    }

    static func listen(_ instant: Int64, track: String) -> String {
        #"{"listened_at":\#(instant),"track_metadata":{"artist_name":"Bench Artist","track_name":"\#(track)","release_name":"Bench Album"}}"#
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

let bench = Bench(base: options.url, connections: max(options.clients, options.batchClients) + 4)
do {
    let (token, me) = try await bench.token()
    let now = Int64(Date().timeIntervalSince1970)
    let run = UUID().uuidString.prefix(8)
    let label = options.label

    // 1. Single listens.
    let singles = try await bench.load(clients: options.clients, seconds: options.seconds) { client, n in
        try await bench.submit("single", [Bench.listen(now - 60 - Int64(n % 3000), track: "\(run) s\(client)-\(n)")], token: token)
    }
    print("\(label): single listens, \(options.clients) clients: \(Int(Double(singles.samples.count) / options.seconds)) listens/s "
          + "(\(singles.samples.count) in \(Int(options.seconds)) s), p50 \(Latencies.ms(singles.percentile(0.5))), p99 \(Latencies.ms(singles.percentile(0.99)))")

    // 2. Imports of 1,000.
    let batches = try await bench.load(clients: options.batchClients, seconds: options.seconds) { client, n in
        let listens = (0..<1000).map { i in Bench.listen(now - 3600 - Int64(i) * 30, track: "\(run) b\(client)-\(n)-\(i)") }
        try await bench.submit("import", listens, token: token)
    }
    let batchRate = Double(batches.samples.count * 1000) / options.seconds
    print("\(label): imports of 1,000, \(options.batchClients) clients: \(Int(batchRate)) listens/s "
          + "(\(batches.samples.count) imports), p50 \(Latencies.ms(batches.percentile(0.5))), p99 \(Latencies.ms(batches.percentile(0.99)))")

    // 3. Visible in the chart after the 200.
    var visible = Latencies()
    let week = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
    for i in 0..<200 {
        let track = "\(run) v\(i)"
        try await bench.submit("single", [Bench.listen(Int64(Date().timeIntervalSince1970) - 5, track: track)], token: token)
        let answered = ContinuousClock.now
        while true {
            let (status, chart, _) = try await bench.send(.GET, "/api/u/\(me)/chart?week=\(week)&kind=track&min_plays=0")
            guard status == 200 else { throw BenchFailure(description: "the chart answered \(status)") }
            if chart.contains(track) { break }
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
