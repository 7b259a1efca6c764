import Foundation
import GRDB
import PostgresNIO
import PostgresStore
import Synchronization
import Testing
import TestSupport
import VinylogueCore
import Workers
@testable import SQLiteStore
@testable import Stores

/// Forwarding on the one job queue, on both stores: an outbox from before
/// the queue (listens waiting, claimed by a sender that died, sent) is
/// upgraded and each unfinished listen reaches its service exactly once;
/// an account erased while its listens are being sent keeps nothing.
@Suite struct ForwardingJobTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// A service that keeps what it is sent, says which listens it has,
    /// and, when told, holds a send until it is released.
    final class RecordingUpstream: ForwardingUpstream {
        let target: ForwardingTarget
        var batchLimit: Int { 50 }
        /// Every listen it received, in order (one twice is one forwarded twice).
        let received = Mutex<[Scrobble]>([])
        let holding = Mutex(false)
        /// Signalled when a held send has begun.
        let sending = Wakeup()
        /// Lets a held send go on.
        let release = Wakeup()

        init(_ target: ForwardingTarget, having earlier: [Scrobble] = []) {
            self.target = target
            received.withLock { $0 = earlier }
        }

        func send(_ listens: [OutboxListen], as choice: ForwardingChoice) async -> ForwardingOutcome {
            if holding.withLock({ $0 }) {
                sending.signal()
                await release.wait()
            }
            received.withLock { $0 += listens.map(\.listen.scrobble) }
            return .delivered(ignored: [:])
        }

        func arrived(_ listens: [OutboxListen], as choice: ForwardingChoice) async throws(SourceError) -> Set<Int64> {
            let there = Set(received.withLock { $0 })
            return Set(listens.filter { there.contains($0.listen.scrobble) }.map(\.id))
        }

        func playingNow(_ listen: ListenToForward, as choice: ForwardingChoice) async throws(SourceError) {}
    }

    /// A listen of `n`, as the old outbox rows below hold it.
    static func scrobble(_ n: Int) -> Scrobble {
        Scrobble(instant: 1_789_990_000 + Int64(n) * 240, artist: "Old Outbox", album: "", track: "Track \(n)")
    }

    /// Rows as the outbox held them before the queue: (owner, target, n,
    /// state, due): for the household's ListenBrainz and RJ's Last.fm (RJ
    /// is account 1) two waiting, one claimed by a sender that died (its
    /// deadline ahead, "sending") and one sent. The claimed ones had
    /// reached the service before their sender died.
    static let oldRows: [(owner: Int64, target: Int, n: Int, state: Int, due: Double)] = [
        (0, 2, 0, 0, now.timeIntervalSince1970 - 60), (0, 2, 1, 0, now.timeIntervalSince1970 - 30),
        (0, 2, 2, 1, now.timeIntervalSince1970 + 90), (0, 2, 3, 2, now.timeIntervalSince1970 - 600),
        (1, 1, 4, 0, now.timeIntervalSince1970 - 60), (1, 1, 5, 0, now.timeIntervalSince1970),
        (1, 1, 6, 1, now.timeIntervalSince1970 + 90), (1, 1, 7, 2, now.timeIntervalSince1970 - 600),
    ]

    @Test func sqliteOutboxWaitingBeforeTheQueueIsForwardedOnceAfterIt() async throws {
        // The database as the release before forwarding's jobs left it.
        try await OldSQLiteDatabase.upgraded(from: "history copies in the job queue", filling: { db in
            try db.execute(sql: """
                INSERT INTO account(id, name_key, name, lastfm_session_key, created_at, signed_in_at) VALUES (1, 'rj', 'RJ', 'k', 0, 0)
                """)
            for row in Self.oldRows {
                let s = Self.scrobble(row.n)
                try db.execute(sql: """
                    INSERT INTO forward_outbox(owner, target, instant, artist, track, album, state, due_at, received_at, sent_at)
                    VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?)
                    """, arguments: [row.owner, row.target, s.instant, s.artist, s.track, row.state, row.due,
                                     Self.now.timeIntervalSince1970 - 900, row.state == 2 ? Self.now.timeIntervalSince1970 - 600 : nil])
            }
        }) { database in
            try await Self.forwardOnce(SQLiteBackend(database))
        }
    }

    @Test func postgresOutboxWaitingBeforeTheQueueIsForwardedOnceAfterIt() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                // Back to the schema before forwarding's jobs.
                try await database.client.query("DELETE FROM schema_migration WHERE name = 'forwarding-in-the-job-queue'")
                let (account, _) = try await PostgresAccountStore(database).signedIn(try Username("RJ"), lastFMSessionKey: "k", at: Self.now)
                #expect(account.id == 1)
                for row in Self.oldRows {
                    let s = Self.scrobble(row.n)
                    let due = Date(timeIntervalSince1970: row.due), received = Self.now.addingTimeInterval(-900)
                    let sent: Date? = row.state == 2 ? Self.now.addingTimeInterval(-600) : nil
                    try await database.client.query("""
                        INSERT INTO forward_outbox(owner, target, instant, artist, track, album, state, due_at, received_at, sent_at)
                        VALUES (\(row.owner), \(Int16(row.target)), \(s.instant), \(s.artist), \(s.track), '', \(Int16(row.state)), \(due),
                                \(received), \(sent))
                        """)
                }
                try await database.migrate()
                try await Self.forwardOnce(PostgresBackend(database))
            }
        }
    }

    /// Sets both owners' forwarding and runs the queue until it is empty:
    /// each unfinished listen reaches its service exactly once (the claimed
    /// one, which had arrived, is found there and not sent again), the
    /// sent ones never again.
    static func forwardOnce(_ stores: any StoreBackend) async throws {
        let rj = ListOwner.account(1)
        try await stores.outbox.setListenBrainz(token: "lb", user: "home", for: .household, at: now)
        try await stores.outbox.setForwardsToLastFM(true, for: rj, at: now)
        #expect(try await stores.jobs.counts(of: .forwarding) == [.queued: 2])
        #expect(try await stores.jobs.jobs(of: .forwarding, key: "1/1").first?.person == "rj")
        #expect(try await stores.jobs.jobs(of: .forwarding, key: "0/2").first?.person == "")
        let listenBrainz = RecordingUpstream(.listenBrainz, having: [scrobble(2), scrobble(3)])
        let lastFM = RecordingUpstream(.lastFM, having: [scrobble(6), scrobble(7)])
        let clock = WallClock.fixed(now)
        let forwarder = ListenForwarder(outbox: stores.outbox, upstreams: [listenBrainz, lastFM], clock: clock)
        let runner = JobRunner(queue: stores.jobs, handlers: [forwarder], clock: clock, wakeup: Wakeup())
        var runs = 0
        while await runner.runNext() { runs += 1 }
        #expect(runs == 2)
        #expect(listenBrainz.received.withLock { $0 } == [scrobble(2), scrobble(3), scrobble(0), scrobble(1)])
        #expect(lastFM.received.withLock { $0 } == [scrobble(6), scrobble(7), scrobble(4), scrobble(5)])
        for owner in [ListOwner.household, rj] {
            let state = try await stores.outbox.states(of: owner).values.first
            #expect(state?.sent == 4 && state?.waiting == 0 && state?.failed == 0)
        }
        #expect(try await stores.jobs.counts(of: .forwarding) == [.done: 2])
    }

    /// An account erased while its listens are being sent: the send's
    /// outcome finds its job gone and writes nothing, and nothing of the
    /// account is left in the outbox or the queue.
    @Test(arguments: Backend.allCases)
    func anAccountErasedMidSendKeepsNothing(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, _ in
            let (account, _) = try await stores.accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: Self.now)
            try await stores.outbox.setForwardsToLastFM(true, for: account.owner, at: Self.now)
            let listens = (0..<3).map { ListenToForward(scrobble: Self.scrobble($0), duration: nil) }
            try await stores.outbox.enqueue(listens, of: account.owner, to: [.lastFM], at: Self.now)
            let upstream = RecordingUpstream(.lastFM)
            upstream.holding.withLock { $0 = true }
            let clock = WallClock.fixed(Self.now)
            let forwarder = ListenForwarder(outbox: stores.outbox, upstreams: [upstream], clock: clock)
            let runner = JobRunner(queue: stores.jobs, handlers: [forwarder], clock: clock, wakeup: Wakeup())
            let run = Task { await runner.runNext() }
            await upstream.sending.wait()
            _ = try await eraser.erase(account)
            upstream.release.signal()
            #expect(await run.value)
            // The service had them (the send was under way), but nothing of
            // the account landed in the database afterwards.
            #expect(upstream.received.withLock { $0.count } == 3)
            #expect(try await stores.outbox.states(of: account.owner).isEmpty)
            #expect(try await stores.jobs.jobs(of: .forwarding, key: ForwardingJob(owner: account.owner, target: .lastFM).key).isEmpty)
            #expect(await runner.runNext() == false)
        }
    }
}
