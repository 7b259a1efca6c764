import Foundation
import GRDB
import PostgresNIO
import PostgresStore
import Testing
import Synchronization
import Workers
@testable import SQLiteStore
@testable import Stores
import VinylogueCore

/// A database from before digests ran on the one job queue, with emails
/// in `digest_send`'s own claim columns (one waiting, one claimed by a
/// sender that died, one sent), upgraded: each unfinished one becomes a
/// `digest` job and is sent exactly once; the sent one is left alone.
@Suite struct DigestUpgradeTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// Emails as the old schema kept them: (owner, key, state, holder, lease_until, attempts).
    static let emails: [(Int64, String, String, String?, Double?, Int)] = [
        (0, "waiting", "waiting", nil, nil, 0),
        (7, "claimed", "sending", "gone-host~1/99999/z", now.timeIntervalSince1970 + 600, 1),
        (0, "sent", "sent", nil, nil, 1),
    ]

    @Test func sqliteEmailsWaitingBeforeTheQueueAreSentOnceAfterIt() async throws {
        // The database as the release before digests moved left it.
        try await OldSQLiteDatabase.upgraded(from: "history copies in the job queue", filling: { db in
            for (owner, key, state, holder, lease, attempts) in Self.emails {
                try db.execute(sql: """
                    INSERT INTO digest_send(owner, kind, key, address, state, attempts, due_at, lease_until, holder, queued_at)
                    VALUES (?, 'now', ?, 'me@example.org', ?, ?, ?, ?, ?, ?)
                    """, arguments: [owner, key, state, attempts, Self.now.timeIntervalSince1970 - 60, lease, holder,
                                     Self.now.timeIntervalSince1970 - 60])
            }
        }) { database in
            try await Self.sendOnce(SQLiteBackend(database))
        }
    }

    @Test func postgresEmailsWaitingBeforeTheQueueAreSentOnceAfterIt() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                // Back to the schema before digests moved.
                try await database.client.query("ALTER TABLE digest_send ADD COLUMN lease_until DOUBLE PRECISION, ADD COLUMN holder TEXT")
                try await database.client.query("DELETE FROM schema_migration WHERE name = 'digests-in-the-job-queue'")
                for (owner, key, state, holder, lease, attempts) in Self.emails {
                    try await database.client.query("""
                        INSERT INTO digest_send(owner, kind, key, address, state, attempts, due_at, lease_until, holder, queued_at)
                        VALUES (\(owner), 'now', \(key), 'me@example.org', \(state), \(Int32(attempts)), \(Self.now.timeIntervalSince1970 - 60),
                                \(lease), \(holder), \(Self.now.timeIntervalSince1970 - 60))
                        """)
                }
                try await database.migrate()
                try await Self.sendOnce(PostgresBackend(database))
            }
        }
    }

    /// Counts the emails it is given and ends each as sent, as the
    /// digests' handler does (without writing or mailing anything).
    final class CountingSender: JobHandler {
        let digests: any DigestStore
        let sent = Mutex<[String]>([])
        init(_ digests: any DigestStore) { self.digests = digests }
        var kind: JobKind { .digest }
        func run(_ claim: JobClaim) async -> JobEnding {
            guard let send = try? await digests.begin(claim, at: DigestUpgradeTests.now) else { return .failed(reason: "no row") }
            sent.withLock { $0.append(send.key) }
            _ = try? await digests.end(claim, as: .sent(note: nil), at: DigestUpgradeTests.now)
            return .done
        }
    }

    /// Runs the queue until it is empty: the waiting and the claimed email
    /// go once each, the sent one never.
    static func sendOnce(_ stores: any StoreBackend) async throws {
        let sender = CountingSender(stores.digests)
        let runner = JobRunner(queue: stores.jobs, handlers: [sender], clock: .fixed(now), wakeup: Wakeup(), machine: "here")
        var runs = 0
        while await runner.runNext() { runs += 1 }
        #expect(runs == 2)
        #expect(sender.sent.withLock { $0 }.sorted() == ["claimed", "waiting"])
        let household = try await stores.digests.sends(of: .household, limit: 5), other = try await stores.digests.sends(of: .account(7), limit: 5)
        #expect((household + other).map(\.state) == [.sent, .sent, .sent])
        // The claimed one's earlier try still counts.
        #expect(other.first?.attempts == 2)
        #expect(try await stores.jobs.counts(of: .digest) == [.done: 2])
    }
}
