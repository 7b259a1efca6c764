import Foundation
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Stores

/// The server's request threads: tasks that prefer them run there (their
/// children too), and a chart read asked there is read where it is asked,
/// with no trip to GRDB's reader queue; asked anywhere else it still goes
/// there, so Swift's own threads never block on the database.
@Suite struct RequestThreadsTests {
    @Test func aPreferringTaskAndItsChildrenRunOnThem() async throws {
        let threads = RequestThreads(count: 2, name: "test.request")
        defer { threads.stop() }
        #expect(!threads.isCurrent)
        let (itself, children) = await threads.running {
            let itself = threads.isCurrent
            // Suspending and coming back lands on them again.
            try? await Task.sleep(for: .milliseconds(1))
            let children = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { threads.isCurrent } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            return (itself && threads.isCurrent, children)
        }
        #expect(itself)
        #expect(children == Array(repeating: true, count: 8))
        // Another set of threads is not these.
        let others = RequestThreads(count: 1)
        defer { others.stop() }
        #expect(await others.running { threads.isCurrent } == false)
    }

    /// A blocked thread leaves the rest working: two tasks, each waiting on
    /// the other's signal, both finish on two threads.
    @Test func aBlockedThreadDoesNotStopTheOthers() async throws {
        let threads = RequestThreads(count: 2)
        defer { threads.stop() }
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
        let done = await threads.running {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { first.signal(); return second.wait(timeout: .now() + 5) == .success }
                group.addTask { second.signal(); return first.wait(timeout: .now() + 5) == .success }
                return await group.reduce(true) { $0 && $1 }
            }
        }
        #expect(done)
    }

    /// Work that still prefers them after `stop` runs all the same.
    @Test func workAfterStopStillRuns() async throws {
        let threads = RequestThreads(count: 1)
        threads.stop()
        let sum = await threads.running {
            await withTaskGroup(of: Int.self) { group in
                for n in 1...10 { group.addTask { n } }
                return await group.reduce(0, +)
            }
        }
        #expect(sum == 55)
        #expect(!threads.isCurrent)
    }

    /// The cold chart's read (`chartReading`, which calls its week chooser
    /// inside the read) and a one-week chart: on a request thread, read
    /// right there; from Swift's pool, on a thread of GRDB's; the same
    /// answers either way.
    @Test func aChartAskedOnARequestThreadIsReadThere() async throws {
        let directory = try TemporaryDirectory()
        let threads = RequestThreads(count: 2)
        defer { threads.stop() }
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: directory.url, requestThreads: threads))
        let (scrobbles, weeks) = ArchiveChartTests.madeUpExport()
        _ = try await store.store(scrobbles, of: alice, origin: .lastFMExport)
        let week = weeks[3]

        func read() async throws -> (readHere: Bool, chart: WeeklyChart?, one: [WeeklyChart]?) {
            let readHere = Mutex(false)
            let reading = try await store.chartReading(.album, of: alice, withCopy: true) { _ in
                readHere.withLock { $0 = threads.isCurrent }
                return week
            }
            let one = try await store.charts(.album, of: alice, weeks: [week])
            return (readHere.withLock { $0 }, reading.chart, one)
        }
        let onThem = try await threads.running { try await read() }
        let elsewhere = try await read()
        #expect(onThem.readHere)
        #expect(!elsewhere.readHere)
        #expect(onThem.chart != nil && onThem.chart == elsewhere.chart)
        #expect(onThem.one == elsewhere.one && onThem.one?.first == onThem.chart)
        #expect(onThem.chart?.entries.isEmpty == false)
    }

    /// Awaited reads hold one of GRDB's pooled readers across a suspension
    /// and resume on the request threads; short reads there must never
    /// wait for a pooled reader, or the two wait for each other for ever.
    /// Failed before each request thread read on a connection of its own:
    /// 200 reads at once on two threads never finished.
    @Test func shortReadsAndAwaitedReadsTogetherAllFinish() async throws {
        let directory = try TemporaryDirectory()
        let threads = RequestThreads(count: 2)
        defer { threads.stop() }
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: directory.url, requestThreads: threads))
        let (scrobbles, weeks) = ArchiveChartTests.madeUpExport()
        _ = try await store.store(scrobbles, of: alice, origin: .lastFMExport)
        let reads = Task {
            try await threads.running {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for n in 0..<200 {
                        group.addTask {
                            if n.isMultiple(of: 2) {
                                return try await store.chartReading(.album, of: alice, withCopy: true) { _ in weeks[n % weeks.count] }.chart == nil ? 0 : 1
                            }
                            return try await store.scrobbleCount(of: alice) > 0 ? 1 : 0
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
        }
        let finished = await reads.result(within: .seconds(10))
        #expect(try finished?.get() == 200, "200 reads at once on two request threads did not all finish within 10 s")
    }

    /// A request thread's own connection sees every commit made since its
    /// last read: no statement of a read is left stepping between requests
    /// (one left so holds the old snapshot). Failed before: listens a
    /// player sent never showed in the chart read on the same thread.
    @Test func aRequestThreadSeesWhatWasWrittenSinceItsLastRead() async throws {
        let directory = try TemporaryDirectory()
        let threads = RequestThreads(count: 1)
        defer { threads.stop() }
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: directory.url, requestThreads: threads))
        let (scrobbles, weeks) = ArchiveChartTests.madeUpExport()
        let early = scrobbles.filter { $0.instant < weeks[5].from }, later = scrobbles.filter { $0.instant >= weeks[5].from }
        _ = try await store.store(early, of: alice, origin: .lastFMExport)
        let week = weeks[7]
        func read() async throws -> (span: ClosedRange<Int64>?, chart: WeeklyChart?, one: WeeklyChart?) {
            try await threads.running {
                let reading = try await store.chartReading(.album, of: alice, withCopy: true) { _ in week }
                let one = try await store.charts(.album, of: alice, weeks: [week])?.first
                return (reading.span, reading.chart, one)
            }
        }
        // Somebody not archived yet is asked about first, as a player's
        // owner is before their first listen.
        let bob = try Username("bob")
        let nobody = try await threads.running { try await store.chartReading(.album, of: bob, withCopy: true) { _ in week } }
        #expect(nobody.storedName == nil && nobody.span == nil)
        let before = try await read()
        #expect(before.span?.upperBound ?? .max < weeks[5].from)
        #expect(before.chart == nil || before.chart?.entries.isEmpty == true)
        _ = try await store.store(later, of: alice, origin: .lastFMExport)
        let after = try await read()
        #expect(after.span?.upperBound ?? 0 >= week.from)
        #expect(after.chart?.entries.isEmpty == false)
        #expect(after.one?.entries.isEmpty == false)
        _ = try await store.store(early, of: bob, origin: .lastFMExport)
        let bobNow = try await threads.running { try await store.chartReading(.album, of: bob, withCopy: true) { _ in weeks[2] } }
        #expect(bobNow.storedName == bob && bobNow.span != nil && bobNow.chart?.entries.isEmpty == false)
    }
}
