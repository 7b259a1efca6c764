import Testing
import VinylogueCore

/// `Task.result(within:)`: the bounded wait pages use for slow upstream work.
@Suite(.timeLimit(.minutes(1))) struct BoundedWaitTests {
    /// A task that ends only when the test opens the gate.
    private static func gated() -> (task: Task<Int, Never>, open: @Sendable () -> Void) {
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let task = Task<Int, Never> {
            for await _ in gate { break }
            return 42
        }
        return (task, { opener.yield(); opener.finish() })
    }

    @Test func givesUpWhileTheTaskIsStillRunningAndLeavesItRunning() async {
        let (task, open) = Self.gated()
        // Before the fix the wait raced `task.value` in a task group, which
        // cannot finish before the task does: this never returned.
        let early = await task.value(within: .milliseconds(20))
        #expect(early == nil)
        open()
        #expect(await task.value == 42)  // not cancelled by giving up
    }

    @Test func returnsTheValueAsSoonAsItIsThere() async {
        let (task, open) = Self.gated()
        open()
        #expect(await task.value(within: .seconds(10)) == 42)
    }

    @Test func carriesTheTasksError() async {
        struct Failure: Error, Equatable {}
        let task = Task<Int, any Error> { throw Failure() }
        let result = await task.result(within: .seconds(10))
        #expect(throws: Failure.self) { try result?.get() }
    }
}
