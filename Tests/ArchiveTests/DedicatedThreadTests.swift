import Foundation
import Synchronization
import Testing
@testable import Archive

@Suite struct DedicatedThreadTests {
    /// More blocked jobs than there are cores leave other async work free to run.
    @Test func blockedJobsDoNotStallOtherWork() async throws {
        let gate = DispatchSemaphore(value: 0)
        let jobs = ProcessInfo.processInfo.activeProcessorCount + 2
        let opened = Atomic<Bool>(false)
        let openGate: @Sendable () -> Void = {
            guard !opened.exchange(true, ordering: .relaxed) else { return }
            for _ in 0..<jobs { gate.signal() }
        }
        // The failure guard: the jobs are let go after 10 s whatever happens.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10, execute: openGate)

        let start = ContinuousClock.now
        let blocked = (0..<jobs).map { index in
            Task { try await DedicatedThread.run(named: "blocked-\(index)") { gate.wait(); return index } }
        }
        let otherWork = await Task.detached { (1...1000).reduce(0, +) }.value
        let waited = ContinuousClock.now - start
        openGate()

        var finished: [Int] = []
        for job in blocked { finished.append(try await job.value) }
        #expect(finished == Array(0..<jobs))
        #expect(otherWork == 500_500)
        #expect(waited < .seconds(5), "other work waited \(waited) behind blocked jobs")
    }

    @Test func errorsComeBack() async {
        await #expect(throws: CocoaError.self) {
            try await DedicatedThread.run(named: "failing") { () throws -> Int in throw CocoaError(.fileReadNoSuchFile) }
        }
    }
}
