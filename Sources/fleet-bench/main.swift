import Foundation
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import PostgresStore
import VinylogueApp
import VinylogueCore
import Web

// Upstream economy of a fleet: how many requests Vinylogue sends Last.fm
// for a mix of page views, and so how many views one API key can carry.
//
//   fleet-bench --database postgres://user@host:port/postgres [--views 10000] [--users 500] [--instances 3] [--seed 1]
//
// Builds --instances web apps on one fresh PostgreSQL database (created on
// the given server and dropped afterwards) against an in-process fake
// Last.fm with generated listeners "listener1"…, and sends --views chart
// views drawn Zipf-like: user k with weight 1/k, "N years ago" with weight
// 1/N (1…10), spread over the instances, 32 at a time. Then the same mix
// again, warm. Prints the requests Last.fm saw per 1,000 views, and the
// views per second that Last.fm's 5 requests a second allow. The rate
// limit is raised for the run (it measures counts, not waiting).

struct Options: Sendable {
    var database = ""
    var views = 10_000
    var users = 500
    var instances = 3
    var seed: UInt64 = 1
}

var parsed = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--database": parsed.database = arguments.popFirst() ?? ""
    case "--views": parsed.views = arguments.popFirst().flatMap(Int.init) ?? parsed.views
    case "--users": parsed.users = arguments.popFirst().flatMap(Int.init) ?? parsed.users
    case "--instances": parsed.instances = max(1, arguments.popFirst().flatMap(Int.init) ?? parsed.instances)
    case "--seed": parsed.seed = arguments.popFirst().flatMap(UInt64.init) ?? parsed.seed
    default:
        FileHandle.standardError.write(Data("usage: fleet-bench --database postgres://… [--views N] [--users N] [--instances N] [--seed N]\n".utf8))
        exit(2)
    }
}
let options = parsed
guard !options.database.isEmpty else {
    FileHandle.standardError.write(Data("fleet-bench: --database postgres://user@host:port/postgres is required (a server it may create a database on)\n".utf8))
    exit(2)
}

/// Draws index k in 0..<count with weight 1/(k+1).
struct Zipf {
    let cumulative: [Double]
    init(count: Int) {
        var total = 0.0
        cumulative = (1...count).map { k in total += 1 / Double(k); return total }
    }
    func draw(_ random: inout SplitMix64) -> Int {
        let target = Double(random.next() >> 11) / Double(1 << 53) * cumulative.last!
        var low = 0, high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// One run of the benchmark.
struct FleetBench: Sendable {
    let options: Options
    let fake: FakeLastFM
    let clock: WallClock

    /// `count` views: user k with weight 1/k, N years ago with weight 1/N.
    func mix(_ count: Int, _ random: inout SplitMix64) -> [String] {
        let users = Zipf(count: options.users), years = Zipf(count: 10)
        return (0..<count).map { _ in "/u/listener\(users.draw(&random) + 1)?years_ago=\(years.draw(&random) + 1)" }
    }

    func configuration(_ n: Int, databaseURL: String, lastFM url: String, scratch: URL) -> VinylogueConfiguration {
        var configuration = VinylogueConfiguration(environment: [:])
        configuration.dataDirectory = scratch.appendingPathComponent("instance\(n)")
        configuration.databaseURL = databaseURL
        configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 1000, maxAttempts: 1)
        configuration.imageBase = url.replacingOccurrences(of: "2.0/", with: "i/u/")
        return configuration
    }

    /// Builds the instances one inside the other, then runs `body` with a
    /// client and the background work of each.
    func withInstances(_ built: [any TestClientProtocol], _ background: [BackgroundWork], databaseURL: String, lastFM url: String,
                       scratch: URL, _ body: @Sendable ([any TestClientProtocol], [BackgroundWork]) async throws -> String) async throws -> String {
        if built.count == options.instances { return try await body(built, background) }
        let configuration = configuration(built.count, databaseURL: databaseURL, lastFM: url, scratch: scratch)
        return try await Composition.with(configuration, clock: clock) { composition in
            let app = try await composition.buildApplication()
            return try await app.test(.router) { client in
                try await withInstances(built + [client], background + [composition.background], databaseURL: databaseURL,
                                        lastFM: url, scratch: scratch, body)
            }
        }
    }

    /// Sends `views`, 32 at a time, spread over `clients`; waits for the
    /// work they started; returns what Last.fm saw and how many were not 200.
    func send(_ views: [String], _ clients: [any TestClientProtocol], _ background: [BackgroundWork]) async throws -> (requests: Int, failed: Int) {
        await fake.clearLog()
        let failed = try await withThrowingTaskGroup(of: Int.self) { group in
            var failed = 0, next = 0
            func add() {
                let path = views[next], client = clients[next % clients.count]
                group.addTask { try await client.execute(uri: path, method: .get, headers: [:], body: nil).status == .ok ? 0 : 1 }
                next += 1
            }
            while next < min(32, views.count) { add() }
            while let result = try await group.next() {
                failed += result
                if next < views.count { add() }
            }
            return failed
        }
        for work in background { await work.idle() }
        return (await fake.requests().count, failed)
    }

    func line(_ name: String, _ result: (requests: Int, failed: Int)) -> String {
        let perThousand = Double(result.requests) * 1000 / Double(options.views)
        let viewsPerSecond = perThousand > 0 ? 5 * 1000 / perThousand : .infinity
        return "\(name): \(result.requests) requests to Last.fm for \(options.views) views (\(result.failed) not 200): "
            + String(format: "%.1f per 1,000 views; 5 requests/s carry %.1f views/s", perThousand, viewsPerSecond)
    }

    func run() async throws -> String {
        var random = SplitMix64(seed: options.seed)
        let cold = mix(options.views, &random), warm = mix(options.views, &random)
        let started = ContinuousClock.now
        return try await PostgresDatabase.withTemporaryDatabase(server: options.database) { databaseURL in
            try await FakeLastFMServer.withRunning(fake) { url -> String in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-bench-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: scratch) }
                return try await withInstances([], [], databaseURL: databaseURL, lastFM: url, scratch: scratch) { clients, background in
                    let first = try await send(cold, clients, background)
                    let second = try await send(warm, clients, background)
                    let seconds = (ContinuousClock.now - started).components.seconds
                    let viewed = Set(cold.map { $0.split(separator: "?")[0] }).count
                    return """
                    fleet-bench: \(options.instances) instances on one PostgreSQL database, \(options.users) users (\(viewed) viewed), Zipf mix, seed \(options.seed)
                    \(line("cold", first))
                    \(line("warm", second))
                    wall time \(seconds) s
                    """
                }
            }
        }
    }
}

// 8 July 2023, as the tests.
let clock = WallClock.fixed(Date(timeIntervalSince1970: 1_688_806_800))
print(try await FleetBench(options: options, fake: try FakeLastFM(clock: clock), clock: clock).run())
