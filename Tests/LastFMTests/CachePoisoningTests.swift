import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

/// Stored answers in memory, with a way to let them all go stale.
actor MemoryResponseCache: LastFMResponseCache {
    private var entries: [String: CachedResponse] = [:]

    func lookup(_ key: String) -> CachedResponse? { entries[key] }

    func store(_ body: Data, for key: String, expires: Date) { entries[key] = CachedResponse(body: body, expires: expires) }

    func put(_ body: Data, for key: String, expires: Date) { entries[key] = CachedResponse(body: body, expires: expires) }

    func expireAll() {
        entries = entries.mapValues { CachedResponse(body: $0.body, expires: .distantPast) }
    }

    var bodies: [Data] { Array(entries.values.map(\.body)) }
}

/// A broken answer from Last.fm must never be stored, never replace a good
/// copy, and never stand in the way of a saved copy (issue 7, points 3 and 5).
@Suite struct CachePoisoningTests {
    static let brokenBodies: [FakeLastFM.Fault] = [.truncated, .malformed, .wrongShape, .oversized(bytes: 200 * 1024)]

    /// Used to fail: the truncated chart list was stored before it was
    /// decoded, and every later request read the broken copy as fresh.
    @Test(arguments: brokenBodies)
    func aBrokenAnswerIsNeverStored(fault: FakeLastFM.Fault) async throws {
        let cache = MemoryResponseCache()
        try await withFakeLastFM(maxAttempts: 1, maxResponseBytes: 64 * 1024, cache: cache) { fake, client in
            await fake.inject(.init(fault, times: 1))
            await #expect(throws: SourceError.self) { try await client.chartList(for: ybsc) }
            #expect(await cache.bodies.isEmpty)
            // The next request asks Last.fm again and gets the real list.
            let list = try await client.chartList(for: ybsc)
            #expect(list.weeks.count == 804)
            #expect(await fake.requests().count == 2)
            #expect(await cache.bodies.count == 1)
        }
    }

    /// Used to fail: a malformed, truncated or oversized answer was a 502
    /// although a good saved copy existed.
    @Test(arguments: brokenBodies)
    func aBrokenAnswerFallsBackToTheSavedCopyAndKeepsIt(fault: FakeLastFM.Fault) async throws {
        let cache = MemoryResponseCache()
        try await withFakeLastFM(maxAttempts: 1, maxResponseBytes: 64 * 1024, cache: cache) { fake, client in
            let good = try await client.chartList(for: ybsc)
            let stored = await cache.bodies
            await cache.expireAll()
            await fake.inject(.init(fault, times: 1))
            let stale = StaleResponses()
            let again = try await StaleResponses.$current.withValue(stale) { try await client.chartList(for: ybsc) }
            #expect(again == good)
            #expect(stale.failures.count == 1)
            if case .malformedResponse? = stale.failures.first {} else { Issue.record("unexpected \(stale.failures)") }
            #expect(await cache.bodies == stored)
        }
    }

    /// A copy stored broken by an older version counts as absent.
    @Test func aBrokenStoredCopyIsNotServed() async throws {
        let cache = MemoryResponseCache()
        try await withFakeLastFM(cache: cache) { fake, client in
            _ = try await client.chartList(for: ybsc)
            let key = try #require(await cache.keys.first)
            await cache.put(Data(#"{"weeklychartlist":{"chart":[{"#.utf8), for: key, expires: .distantFuture)
            let list = try await client.chartList(for: ybsc)
            #expect(list.weeks.count == 804)
            #expect(await fake.requests().count == 2)
        }
    }
}

extension MemoryResponseCache {
    var keys: [String] { Array(entries.keys) }
}
