import Foundation
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import PostgresStore
import TestSupport
import Testing
import VinylogueApp
import VinylogueCore
import Web

/// Two instances of the web app, each with its own data directory, on one
/// PostgreSQL database and one API key: together they keep to Last.fm's 5
/// requests a second, and never ask it the same thing twice.
@Suite struct FleetTests {
    @Test func twoInstancesAskLastFMOnceForEachThingAndWithinOneBudget() async throws {
        let cluster = try TestCluster.url()
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { databaseURL in
            try await FakeLastFMServer.withRunning(fake) { url in
                func configuration(_ name: String) -> VinylogueConfiguration {
                    var configuration = VinylogueConfiguration(environment: [:])
                    configuration.dataDirectory = Harness.scratch.appendingPathComponent("vinylogue-fleet-\(name)-\(UUID().uuidString)")
                    configuration.databaseURL = databaseURL
                    configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 5, maxAttempts: 1)
                    configuration.imageBase = url.replacingOccurrences(of: "2.0/", with: "i/u/")
                    configuration.patience = .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10))
                    return configuration
                }
                let first = configuration("a"), second = configuration("b")
                defer {
                    try? FileManager.default.removeItem(at: first.dataDirectory)
                    try? FileManager.default.removeItem(at: second.dataDirectory)
                }
                try await Composition.with(first, clock: clock.wallClock) { one in
                    try await Composition.with(second, clock: clock.wallClock) { two in
                        let appOne = try await one.buildApplication(), appTwo = try await two.buildApplication()
                        try await appOne.test(.router) { clientOne in
                            try await appTwo.test(.router) { clientTwo in
                                await fake.clearLog()
                                // The same 8 cold weeks, asked of both instances at once.
                                let weeks = (0..<8).map { "/u/RJ/week/\(2012 + $0)-03-14" }
                                let pages = try await withThrowingTaskGroup(of: (String, HTTPResponse.Status).self) { group in
                                    for week in weeks {
                                        group.addTask { (week, try await clientOne.get(week).status) }
                                        group.addTask { (week, try await clientTwo.get(week).status) }
                                    }
                                    return try await group.reduce(into: [(String, HTTPResponse.Status)]()) { $0.append($1) }
                                }
                                #expect(pages.count == 16)
                                for (week, status) in pages { #expect(status == .ok, "\(week)") }
                                await one.background.idle()
                                await two.background.idle()

                                let upstream = await fake.requests()
                                let asked = upstream.map { "\($0.method) \($0.parameters.filter { $0.key != "api_key" }.sorted { $0.key < $1.key })" }
                                #expect(Set(asked).count == asked.count,
                                        "asked twice: \(Dictionary(grouping: asked) { $0 }.filter { $1.count > 1 }.keys)")
                                #expect(upstream.filter { $0.method == "user.getweeklyalbumchart" }.count >= 8)
                                let arrivals = upstream.map(\.received).sorted()
                                if arrivals.count > 5 {
                                    let tightest = (5..<arrivals.count).map { arrivals[$0] - arrivals[$0 - 5] }.min() ?? 1
                                    #expect(tightest >= 0.99, "6 requests within \(tightest) s")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
