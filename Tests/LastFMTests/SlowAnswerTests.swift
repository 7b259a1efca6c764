import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

/// A slow Last.fm costs a caller with an `AnswerDeadline` no more than its
/// patience, and the slow answer still reaches the cache (issue 7, point 4).
@Suite(.timeLimit(.minutes(1))) struct SlowAnswerTests {
    /// Used to fail: the call waited for Last.fm (3 attempts of 15 s in
    /// production) although a saved copy was there.
    @Test func aSavedCopyAnswersOnceThePatienceIsUpAndTheSlowAnswerReplacesIt() async throws {
        let cache = MemoryResponseCache()
        try await withFakeLastFM(cache: cache) { fake, client in
            let good = try await client.chartList(for: ybsc)
            await cache.expireAll()
            await fake.inject(.init(.held, method: "user.getweeklychartlist", times: 1))
            let stale = StaleResponses()
            let answered = try await AnswerDeadline.$current.withValue(AnswerDeadline(after: .milliseconds(50))) {
                try await StaleResponses.$current.withValue(stale) { try await client.chartList(for: ybsc) }
            }
            #expect(answered == good)
            #expect(stale.failures == [.stillWaiting])
            // The request is still with Last.fm; once it answers, it is stored.
            await fake.untilHolding(1)
            await fake.releaseHeld()
            _ = try await client.chartList(for: ybsc)  // joins the request in flight, or reads what it stored
            #expect(await fake.requests().count == 2)
            let fresh = StaleResponses()
            _ = try await AnswerDeadline.$current.withValue(AnswerDeadline(after: .zero)) {
                try await StaleResponses.$current.withValue(fresh) { try await client.chartList(for: ybsc) }
            }
            #expect(fresh.failures.isEmpty)
            #expect(await fake.requests().count == 2)
        }
    }

    /// Without a saved copy the caller hears that Last.fm is slow, in time,
    /// and the next caller gets the answer the first one started.
    @Test func withoutASavedCopyTheCallerIsToldLastFMIsSlowAndTheAnswerIsKept() async throws {
        let cache = MemoryResponseCache()
        try await withFakeLastFM(cache: cache) { fake, client in
            await fake.inject(.init(.held, method: "user.getweeklychartlist", times: 1))
            await #expect(throws: SourceError.stillWaiting) {
                try await AnswerDeadline.$current.withValue(AnswerDeadline(after: .milliseconds(50))) {
                    try await client.chartList(for: ybsc)
                }
            }
            await fake.untilHolding(1)
            await fake.releaseHeld()
            let list = try await client.chartList(for: ybsc)
            #expect(list.weeks.count == 804)
            #expect(await fake.requests().count == 1)  // no duplicate request
            #expect(await cache.bodies.count == 1)
        }
    }

    /// Sequential calls share one deadline: a page that makes several calls
    /// answers within its patience, not patience times calls.
    @Test func callsAfterTheDeadlineDoNotWaitAgain() async throws {
        try await withFakeLastFM(cache: MemoryResponseCache()) { fake, client in
            await fake.inject(.init(.held))
            await AnswerDeadline.$current.withValue(AnswerDeadline(after: .milliseconds(50))) {
                await #expect(throws: SourceError.stillWaiting) { try await client.chartList(for: ybsc) }
                let started = ContinuousClock.now
                await #expect(throws: SourceError.stillWaiting) { try await client.user(ybsc) }
                // Already past the deadline: answers without waiting for Last.fm
                // (which holds every answer until the test lets go).
                #expect(ContinuousClock.now - started < .seconds(10))
            }
            await fake.untilHolding(2)
            await fake.clearFaults()
            await fake.releaseHeld()
        }
    }
}
