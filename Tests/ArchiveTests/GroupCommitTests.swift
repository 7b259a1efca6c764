import Foundation
import GRDB
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// Writes that arrive together share one transaction and one commit, yet
/// each caller hears only about its own write, and only once it is on disk
/// (the writer syncs every commit: `theWriterSyncsEveryCommit`).
@Suite struct GroupCommitTests {
    /// Counts the commits of the writer connection.
    final class CommitCounter: TransactionObserver, @unchecked Sendable {
        let commits = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { commits.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    struct Refused: Error {}

    /// A database whose writer is held busy until `release` is called, so
    /// that writes pile up behind it and form one group.
    final class HeldWriter {
        let dir: TemporaryDirectory
        let database: ArchiveDatabase
        let counter = CommitCounter()
        let gate = DispatchSemaphore(value: 0)

        init() async throws {
            let dir = try TemporaryDirectory()
            database = try ArchiveDatabase(directory: dir.url)
            self.dir = dir
            let counter = counter
            try await database.writer.write { db in
                try db.execute(sql: "CREATE TEMP TABLE item (n INTEGER PRIMARY KEY)")
                db.add(transactionObserver: counter, extent: .databaseLifetime)
            }
            counter.commits.withLock { $0 = 0 }
            let gate = gate
            database.writer.asyncWriteWithoutTransaction { _ in gate.wait() }
        }

        /// Waits until `count` writes wait for a group, then lets the writer go.
        func release(whenWaiting count: Int) async {
            while database.groupCommit.waitingWrites < count { await Task.yield() }
            gate.signal()
        }

        func items() async throws -> [Int] {
            try await database.writer.write { db in try Int.fetchAll(db, sql: "SELECT n FROM item ORDER BY n") }
        }
    }

    @Test func writesThatArriveTogetherShareOneCommitAndEachHearsItsOwnResult() async throws {
        let held = try await HeldWriter()
        let groupCommit = held.database.groupCommit
        let results = try await withThrowingTaskGroup(of: (Int, Result<Int, Refused>).self) { group in
            for n in 1...20 {
                group.addTask {
                    do {
                        return (n, .success(try await groupCommit.write { db in
                            try db.execute(sql: "INSERT INTO item(n) VALUES (?)", arguments: [n])
                            // Every seventh writes its row, then fails: its row must go.
                            if n % 7 == 0 { throw Refused() }
                            return n * 10
                        }))
                    } catch is Refused {
                        return (n, .failure(Refused()))
                    }
                }
            }
            await held.release(whenWaiting: 20)
            var results: [Int: Result<Int, Refused>] = [:]
            for try await (n, result) in group { results[n] = result }
            return results
        }
        for n in 1...20 {
            if n % 7 == 0 {
                #expect(throws: Refused.self) { try results[n]!.get() }
            } else {
                #expect(try results[n]!.get() == n * 10)
            }
        }
        #expect(try await held.items() == (1...20).filter { $0 % 7 != 0 })
        // One group for all twenty (the read above commits nothing; the
        // write that read them is a transaction of its own: one more).
        #expect(held.counter.commits.withLock { $0 } == 2)
    }

    @Test func aWriteThatEndsTheTransactionLeavesNoCallerToldItsWriteWasStoredWhenItWasNot() async throws {
        let held = try await HeldWriter()
        let groupCommit = held.database.groupCommit
        let told = await withTaskGroup(of: Int?.self) { group in
            for n in 1...5 {
                group.addTask {
                    do {
                        try await groupCommit.write { db in
                            try db.execute(sql: "INSERT INTO item(n) VALUES (?)", arguments: [n])
                            // As SQLite does after some errors (a full disk):
                            // the whole transaction is rolled back.
                            if n == 3 { try db.execute(sql: "ROLLBACK") }
                        }
                        return n
                    } catch {
                        return nil
                    }
                }
            }
            await held.release(whenWaiting: 5)
            var told: [Int] = []
            for await n in group { if let n { told.append(n) } }
            return told.sorted()
        }
        // Whichever of them ran before the third in the group went with it.
        #expect(!told.contains(3))
        #expect(try await held.items() == told)
        #expect(told.count < 4)
    }

    /// A commit waits for the disk. GRDB's pool turns WAL on with
    /// `synchronous = NORMAL`, which syncs only at checkpoints: with it,
    /// an acknowledged listen could be lost in a power cut (issue 29).
    /// Read back after opening, after a write, and after reopening.
    @Test func theWriterSyncsEveryCommit() async throws {
        let dir = try TemporaryDirectory()
        do {
            let database = try ArchiveDatabase(directory: dir.url)
            #expect(try await database.writerSynchronousLevel() == 2)
            _ = try await database.groupCommit.write { db in try db.execute(sql: "CREATE TABLE kept (n INTEGER)") }
            #expect(try await database.writerSynchronousLevel() == 2)
            let mode = try await database.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
            #expect(mode == "wal")
        }
        let reopened = try ArchiveDatabase(directory: dir.url)
        #expect(try await reopened.writerSynchronousLevel() == 2)
    }

    @Test func oneWriteAloneIsCommittedWithoutWaitingForCompany() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url)
        let value = try await database.groupCommit.write { db in try Int.fetchOne(db, sql: "SELECT 42")! }
        #expect(value == 42)
        #expect(database.groupCommit.waitingWrites == 0)
    }
}

/// The SQLite archive keeps a player's listens and queues them for
/// forwarding in one transaction: both or neither.
@Suite struct SQLiteReceivedListenStoreTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func listens(_ count: Int) -> [ListenToForward] {
        (0..<count).map { i in
            ListenToForward(scrobble: Scrobble(instant: 1_699_990_000 + Int64(i) * 200, artist: "Low", album: "Things We Lost in the Fire",
                                               track: "Track \(i)"), duration: 180)
        }
    }

    @Test func listensAreKeptAndQueuedForTheServicesChosenAmongThoseAvailable() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url)
        let received = SQLiteReceivedListenStore(database)
        let archive = SQLiteScrobbleStore(database: database)
        let outbox = SQLiteForwardingOutbox(database)

        // Nobody chose to forward: kept, nothing queued.
        #expect(try await received.keep(Self.listens(2), of: alice, owner: .household, forwardingAmong: [.lastFM, .listenBrainz], at: Self.now) == 0)
        #expect(try await archive.scrobbleCount(of: alice) == 2)

        // The household forwards to ListenBrainz (it has no Last.fm session).
        try await outbox.setListenBrainz(token: "lb-token", user: "alice", for: .household, at: Self.now)
        // Queued whether or not the archive had them already.
        #expect(try await received.keep(Self.listens(3), of: alice, owner: .household, forwardingAmong: [.lastFM, .listenBrainz], at: Self.now) == 3)
        #expect(try await archive.scrobbleCount(of: alice) == 3)
        // This server forwards nowhere: nothing queued, whatever was chosen.
        let more = (3..<5).map { i in ListenToForward(scrobble: Scrobble(instant: 1_699_995_000 + Int64(i), artist: "Low", album: "", track: "New \(i)"), duration: nil) }
        #expect(try await received.keep(more, of: alice, owner: .household, forwardingAmong: [], at: Self.now) == 0)
        // An import's thousand have a transaction of their own, queued all the same.
        let backlog = (0..<1000).map { i in
            ListenToForward(scrobble: Scrobble(instant: 1_600_000_000 + Int64(i) * 300, artist: "Low", album: "Secret Name", track: "B\(i % 30)"), duration: nil)
        }
        #expect(try await received.keep(backlog, of: alice, owner: .household, forwardingAmong: [.listenBrainz], at: Self.now) == 1000)
        #expect(try await archive.scrobbleCount(of: alice) == 1005)
        // One forwarding job for the owner and service, queued with the rows.
        let jobs = try await SQLiteJobQueue(database).jobs(of: .forwarding, key: "0/2")
        #expect(jobs.map(\.state) == [.queued] && jobs.first?.person == "")
    }

    @Test func whenTheOutboxCannotBeWrittenTheListensAreNotKeptEither() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url)
        let received = SQLiteReceivedListenStore(database)
        try await SQLiteForwardingOutbox(database).setListenBrainz(token: "lb-token", user: "alice", for: .household, at: Self.now)
        // A damaged outbox: every insert into it fails.
        try await database.writer.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER refuse BEFORE INSERT ON forward_outbox BEGIN SELECT RAISE(ABORT, 'outbox refused'); END
                """)
        }
        for count in [1, 500] {
            await #expect(throws: ReceivedListenFailure.self) {
                try await received.keep(Self.listens(count), of: alice, owner: .household, forwardingAmong: [.listenBrainz], at: Self.now)
            }
        }
        #expect(try await SQLiteScrobbleStore(database: database).scrobbleCount(of: alice) == 0)
    }
}
