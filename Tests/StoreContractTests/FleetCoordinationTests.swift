import Foundation
import LastFM
import PostgresStore
import Synchronization
import Testing
import VinylogueCore

/// What several instances on one PostgreSQL database share: Last.fm's
/// request budget and each request's one fetch. Each "instance" here is a
/// pool of its own on the same fresh database.
@Suite struct FleetCoordinationTests {
    /// A value tasks share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
    }

    /// Runs `body` with `count` pools on one fresh database.
    static func withInstances(_ count: Int, _ body: @Sendable ([PostgresDatabase]) async throws -> Void) async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await withThrowingTaskGroup(of: Void.self) { group in
                let instances = try (0..<count).map { _ in try PostgresDatabase(url: url) }
                for instance in instances { group.addTask { await instance.run() } }
                defer { group.cancelAll() }
                try await instances[0].migrate()
                try await body(instances)
            }
        }
    }

    /// Three instances asking at once keep, together, to the limit: any
    /// `limit + 1` permits are granted at least a window apart.
    @Test func threeInstancesShareOneBudget() async throws {
        try await Self.withInstances(3) { instances in
            let limit = 3, window = Duration.milliseconds(300)
            let permits = instances.map { PostgresRequestPermits($0, limit: limit, window: window) }
            try await permits[0].prepare()
            let granted = Shared<[ContinuousClock.Instant]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<15 {
                    let pacer = permits[n % 3]
                    group.addTask {
                        let permit = try await pacer.acquire()
                        granted.withLock { $0.append(.now) }
                        await pacer.release(permit)
                    }
                }
                try await group.waitForAll()
            }
            let times = granted.withLock { $0 }.sorted()
            #expect(times.count == 15)
            let tightest = (limit..<times.count).map { times[$0] - times[$0 - limit] }.min() ?? .zero
            #expect(tightest >= .milliseconds(280), "\(limit + 1) permits within \(tightest)")
        }
    }

    /// A fleet's background work takes a permit only when more than it
    /// must leave spare are free, on any instance, without waiting.
    @Test func aPermitIsTakenWithoutWaitingOnlyWhenMoreThanTheSpareAreFree() async throws {
        try await Self.withInstances(2) { instances in
            let permits = instances.map { PostgresRequestPermits($0, limit: 3, window: .seconds(10)) }
            try await permits[0].prepare()
            let first = try await permits[0].acquireIfFree(leaving: 1)
            #expect(first.permit != nil)
            let second = try await permits[1].acquireIfFree(leaving: 1)
            #expect(second.permit != nil)
            // One left: kept for views, then taken by one.
            let refused = try await permits[0].acquireIfFree(leaving: 1)
            #expect(refused.permit == nil && refused.retryAfter > .zero)
            let last = try await permits[1].acquireIfFree(leaving: 0)
            #expect(last.permit != nil)
            #expect(try await permits[0].acquireIfFree(leaving: 0).permit == nil)
            #expect(Set([first.permit, second.permit, last.permit].compactMap { $0 }).count == 3)
        }
    }

    /// The same request from two instances at once is fetched once: the
    /// other waits for the fetcher and finds its answer saved.
    @Test func oneRequestIsFetchedOnceAcrossInstances() async throws {
        try await Self.withInstances(4) { instances in
            let clock = WallClock.system
            let caches = [PostgresResponseCache(instances[0], coordination: instances[1], clock: clock),
                          PostgresResponseCache(instances[2], coordination: instances[3], clock: clock)]
            let fetches = Shared(0)
            let answers = try await withThrowingTaskGroup(of: Data.self) { group in
                for n in 0..<10 {
                    let cache = caches[n % 2]
                    group.addTask {
                        try await cache.exclusively("user.getweeklyalbumchart&from=1&to=2&user=rj") {
                            if let saved = await cache.lookup("user.getweeklyalbumchart&from=1&to=2&user=rj"), saved.isFresh(at: clock.now) {
                                return saved.body
                            }
                            fetches.withLock { $0 += 1 }
                            try await Task.sleep(for: .milliseconds(100))  // Last.fm answering
                            let body = Data(#"{"weeklyalbumchart":{}}"#.utf8)
                            await cache.store(body, for: "user.getweeklyalbumchart&from=1&to=2&user=rj", expires: .distantFuture)
                            return body
                        }
                    }
                }
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
            #expect(fetches.withLock { $0 } == 1)
            #expect(Set(answers).count == 1 && answers.count == 10)
            // Another request is not held up by this one's lock.
            #expect(PostgresResponseCache.lockKey("a") != PostgresResponseCache.lockKey("b"))
        }
    }
}
