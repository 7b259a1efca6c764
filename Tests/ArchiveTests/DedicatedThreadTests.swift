import Foundation
import Synchronization
import Testing
import TestSupport
@testable import SQLiteStore
import Sync
@testable import Stores

@Suite struct DedicatedThreadTests {
    /// More blocked jobs than there are cores leave other async work free to
    /// run: here only that other work can let the jobs go. Were the jobs
    /// holding Swift's cooperative threads, it could never run, and the
    /// guard would have to open the gate after 30 s.
    @Test func blockedJobsDoNotStallOtherWork() async throws {
        let gate = DispatchSemaphore(value: 0)
        let jobs = ProcessInfo.processInfo.activeProcessorCount + 2
        let openedBy = Mutex<String?>(nil)
        let openGate: @Sendable (String) -> Void = { opener in
            guard openedBy.withLock({ current in
                defer { if current == nil { current = opener } }
                return current == nil
            }) else { return }
            for _ in 0..<jobs { gate.signal() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { openGate("the guard") }

        let blocked = (0..<jobs).map { index in
            Task { try await DedicatedThread.run(named: "blocked-\(index)") { gate.wait(); return index } }
        }
        let otherWork = await Task.detached {
            openGate("other work")
            return (1...1000).reduce(0, +)
        }.value

        var finished: [Int] = []
        for job in blocked { finished.append(try await job.value) }
        #expect(finished == Array(0..<jobs))
        #expect(otherWork == 500_500)
        #expect(openedBy.withLock { $0 } == "other work")
    }

    @Test func errorsComeBack() async {
        await #expect(throws: CocoaError.self) {
            try await DedicatedThread.run(named: "failing") { () throws -> Int in throw CocoaError(.fileReadNoSuchFile) }
        }
    }
}
