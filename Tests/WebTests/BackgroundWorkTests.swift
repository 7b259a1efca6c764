import Testing
import Web

/// The owner of work pages start and do not wait for.
@Suite(.timeLimit(.minutes(1))) struct BackgroundWorkTests {
    /// Counts jobs running at once, and lets the test hold them.
    actor Gauge {
        var now = 0, most = 0
        private var gate: [CheckedContinuation<Void, Never>] = []
        private var open = false
        private var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        func enter() async {
            now += 1
            most = max(most, now)
            if !open {
                await withCheckedContinuation { continuation in
                    gate.append(continuation)
                    let ready = watchers.filter { $0.count <= gate.count }
                    watchers.removeAll { $0.count <= gate.count }
                    ready.forEach { $0.continuation.resume() }
                }
            }
            now -= 1
        }

        /// Returns once `count` jobs are held at the gate.
        func untilHolding(_ count: Int) async {
            guard gate.count < count else { return }
            await withCheckedContinuation { watchers.append((count, $0)) }
        }

        func release() {
            open = true
            gate.forEach { $0.resume() }
            gate.removeAll()
        }

    }

    @Test func atMostTheLimitRunAtOnceAndIdleWaitsForAll() async {
        let work = BackgroundWork(limit: 3)
        let gauge = Gauge()
        var tasks: [Task<Int?, Never>] = []
        for n in 0..<10 { tasks.append(await work.start { await gauge.enter(); return n }) }
        await gauge.untilHolding(3)
        #expect(await gauge.most == 3)
        await gauge.release()
        await work.idle()
        #expect(await gauge.most == 3)
        var results: [Int] = []
        for task in tasks { if let n = await task.value { results.append(n) } }
        #expect(results.sorted() == Array(0..<10))
    }

    @Test func stoppingCancelsWhatIsLeftAndRefusesMore() async {
        let work = BackgroundWork(limit: 1)
        let gauge = Gauge()
        let first = await work.start { await gauge.enter(); return Task.isCancelled }
        let queued = await work.start { 1 }
        await gauge.untilHolding(1)
        await work.stop()
        await gauge.release()
        #expect(await first.value == true)  // told to stop
        #expect(await queued.value == nil)  // never began
        #expect(await work.start { 2 }.value == nil)
        await work.idle()
    }
}
