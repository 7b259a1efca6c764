import Synchronization
import Testing
@testable import LastFM

/// One Last.fm budget shared fairly: views first, history copies round-robin
/// in what views leave.
@Suite struct PrioritisedPermitsTests {
    /// Two copies asking side by side take turns, page by page.
    @Test(.timeLimit(.minutes(1))) func backgroundRequestsTakeTurnsInTheOrderTheyAsked() async throws {
        // One permit, back as soon as it is released: the budget is what
        // the copies wait for.
        let permits = PrioritisedPermits(RateLimit(limit: 1, window: .zero))
        let order = TakenOrder()
        let started = AsyncStream.makeStream(of: Void.self)
        // The permit is out until both copies are in line.
        let first = try await LastFMRequestPriority.$current.withValue(.background) { try await permits.acquire() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in ["a", "b"] {
                group.addTask {
                    try await LastFMRequestPriority.$current.withValue(.background) {
                        started.continuation.yield()
                        for _ in 0..<5 {
                            let permit = try await permits.acquire()
                            order.add(name)
                            await permits.release(permit)
                        }
                    }
                }
            }
            var iterator = started.stream.makeAsyncIterator()
            _ = await iterator.next()
            _ = await iterator.next()
            while permits.backgroundWaiting < 2 { try await Task.sleep(for: .milliseconds(1)) }
            await permits.release(first)
            try await group.waitForAll()
        }
        let taken = order.names
        #expect(taken.count == 10)
        // Never the same copy twice running while the other waits.
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $0 != $1 }, "\(taken)")
        #expect(permits.used.background == 11 && permits.used.views == 0)
    }

    /// After a view, background requests leave a permit spare, so the next
    /// view finds one at once; background work waits for more.
    @Test(.timeLimit(.minutes(1))) func afterAViewCopiesLeaveAPermitForTheNextView() async throws {
        // Three permits, none back within the test (it takes milliseconds).
        // "After a view" lasts 10 s here (as long as the permits' window):
        // with the default second, a loaded run let a second pass between
        // the view and the copy's request, the copy took the last permit,
        // and the test waited for a wait that never came.
        let permits = PrioritisedPermits(RateLimit(limit: 3, window: .seconds(10)), viewsLately: .seconds(10))
        await permits.release(try await permits.acquire())
        #expect(permits.used.views == 1)
        let copyPage = try await LastFMRequestPriority.$current.withValue(.background) { try await permits.acquire() }
        _ = copyPage
        // One permit left: the next copy page waits for it...
        let waiting = Task {
            try await LastFMRequestPriority.$current.withValue(.background) { try await permits.acquire() }
        }
        while permits.backgroundWaiting < 1 { try await Task.sleep(for: .milliseconds(1)) }
        // ...and a view takes it at once.
        _ = try await permits.acquire()
        #expect(permits.used.views == 2)
        #expect(permits.backgroundWaiting == 1)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(permits.backgroundWaiting == 0)
        #expect(permits.used.background == 1)
    }
}

/// The order in which permits were taken, by whom.
final class TakenOrder: Sendable {
    private let taken = Mutex<[String]>([])
    func add(_ name: String) { taken.withLock { $0.append(name) } }
    var names: [String] { taken.withLock { $0 } }
}
