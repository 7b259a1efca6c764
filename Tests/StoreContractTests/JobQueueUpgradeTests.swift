import Foundation
import GRDB
import PostgresNIO
import PostgresStore
import Testing
import TestSupport
import VinylogueCore
import Synchronization
import Workers
@testable import SQLiteStore
@testable import Stores

/// A database from before the one job queue, with uploads waiting in
/// `import_job`'s own claim columns and history copies in `history_copy`'s
/// (in each, one queued, one claimed by a worker that died, one done),
/// upgraded: each unfinished one becomes a job and the runner runs each
/// exactly once; the finished ones are left alone.
@Suite struct JobQueueUpgradeTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ")

    /// Three uploads as the old schema kept them, each a CSV of `lines` plays.
    struct OldUploads {
        let directory: URL
        let files: [URL]
        static let lines = 40

        init() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("upgrade-\(UUID().uuidString)")
            self.directory = directory
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            files = try (0..<3).map { n in
                let file = directory.appendingPathComponent("upload-\(n).csv")
                let rows = (0..<Self.lines).map { i in
                    "\"Low\",\"Album \(n)\",\"Track \(i)\",\"\(JobFenceContractTests.csvDate(1_600_000_000 + Int64(n * 100_000 + i * 600)))\""
                }
                try Data(rows.joined(separator: "\n").utf8).write(to: file)
                return file
            }
        }

        /// (path, state, holder, lease_until) per upload, in the old columns.
        var rows: [(String, String, String?, Double?)] {
            [(files[0].path, "queued", nil, nil),
             (files[1].path, "importing", "gone-host~1/99999/x", JobQueueUpgradeTests.now.timeIntervalSince1970 - 10),
             (files[2].path, "done", nil, nil)]
        }
    }

    @Test func sqliteUploadsWaitingBeforeTheQueueRunOnceAfterIt() async throws {
        let old = try OldUploads()
        defer { try? FileManager.default.removeItem(at: old.directory) }
        let rows = old.rows
        // The database as the release before the queue left it.
        try await OldSQLiteDatabase.upgraded(from: "import job stored batches", in: old.directory.appendingPathComponent("data"), filling: { db in
            for (name, state, holder, lease) in Self.copies {
                try db.execute(sql: """
                    INSERT INTO history_copy(name_key, name, state, queued_at, updated_at, lease_until, holder) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [name.lowercased(), name, state, Self.now.timeIntervalSince1970, Self.now.timeIntervalSince1970, lease, holder])
            }
            for (path, state, holder, lease) in rows {
                try db.execute(sql: """
                    INSERT INTO import_job(owner, name, file_name, path, bytes, machine, state, queued_at, updated_at, lease_until, holder)
                    VALUES (0, 'RJ', 'export.csv', ?, 1, 'here', ?, ?, ?, ?, ?)
                    """, arguments: [path, state, Self.now.timeIntervalSince1970, Self.now.timeIntervalSince1970, lease, holder])
            }
        }) { database in
            try await Self.runOnce(SQLiteBackend(database))
        }
    }

    @Test func postgresUploadsWaitingBeforeTheQueueRunOnceAfterIt() async throws {
        let old = try OldUploads()
        defer { try? FileManager.default.removeItem(at: old.directory) }
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                // Back to the schema before the queue.
                try await database.client.query("DROP TABLE job")
                try await database.client.query("ALTER TABLE import_job ADD COLUMN lease_until DOUBLE PRECISION, ADD COLUMN holder TEXT")
                try await database.client.query("ALTER TABLE history_copy ADD COLUMN lease_until DOUBLE PRECISION, ADD COLUMN holder TEXT")
                try await database.client.query(
                    "DELETE FROM schema_migration WHERE name IN ('one-job-queue', 'history-copies-in-the-job-queue')")
                for (name, state, holder, lease) in Self.copies {
                    try await database.client.query("""
                        INSERT INTO history_copy(name_key, name, state, queued_at, updated_at, lease_until, holder)
                        VALUES (\(name.lowercased()), \(name), \(state), \(Self.now.timeIntervalSince1970), \(Self.now.timeIntervalSince1970),
                                \(lease), \(holder))
                        """)
                }
                for (path, state, holder, lease) in old.rows {
                    try await database.client.query("""
                        INSERT INTO import_job(owner, name, file_name, path, bytes, machine, state, queued_at, updated_at, lease_until, holder)
                        VALUES (0, 'RJ', 'export.csv', \(path), 1, 'here', \(state), \(Self.now.timeIntervalSince1970),
                                \(Self.now.timeIntervalSince1970), \(lease), \(holder))
                        """)
                }
                try await database.migrate()
                try await Self.runOnce(PostgresBackend(database))
            }
        }
    }

    /// History copies as the old schema kept them: (name, state, holder, lease_until).
    static let copies: [(String, String, String?, Double?)] = [
        ("RJ", "queued", nil, nil),
        ("Ana", "copying", "gone-host~1/99999/y", now.timeIntervalSince1970 + 600),
        ("Zeb", "done", nil, nil),
    ]

    /// Counts the history copies it is given to run, and begins and ends
    /// each as the copies' handler does (without copying anything).
    final class CountingCopies: JobHandler {
        let copies: any HistoryCopyStore
        let ran = Mutex<[String]>([])
        init(_ copies: any HistoryCopyStore) { self.copies = copies }
        var kind: JobKind { .historyCopy }
        func run(_ claim: JobClaim) async -> JobEnding {
            ran.withLock { $0.append(claim.job.key) }
            guard let copy = try? await copies.begin(claim, at: JobQueueUpgradeTests.now) else { return .failed(reason: "no row") }
            _ = try? await copies.finish(copy, failure: nil, at: JobQueueUpgradeTests.now)
            return .done
        }
    }

    /// Runs the queue until it is empty: the two unfinished uploads are
    /// imported once each and the two unfinished copies run once each; the
    /// done ones never.
    static func runOnce(_ stores: any StoreBackend) async throws {
        let clock = WallClock.fixed(now)
        let uploads = UploadedImports(jobs: stores.importJobs, archive: stores.archive, clock: clock,
                                      directory: FileManager.default.temporaryDirectory, wakeup: Wakeup(), machine: "here")
        let copies = CountingCopies(stores.historyCopies)
        let runner = JobRunner(queue: stores.jobs, handlers: [uploads, copies], clock: clock, wakeup: Wakeup(), machine: "here")
        var runs = 0
        while await runner.runNext() { runs += 1 }
        #expect(runs == 4)
        #expect(copies.ran.withLock { $0 }.sorted() == ["ana", "rj"])
        for name in ["RJ", "Ana", "Zeb"] {
            #expect(try await stores.historyCopies.copy(of: try Username(name))?.state == .done, "\(name)")
        }
        #expect(try await stores.archive.scrobbleCount(of: rj) == 2 * OldUploads.lines)
        let listed = try await stores.importJobs.jobs(of: .household, limit: 10)
        #expect(listed.map(\.state) == [.done, .done, .done])
        #expect(listed[1].summary?.contains("40") == true && listed[2].summary?.contains("40") == true)
        #expect(try await stores.jobs.counts(of: .upload) == [.done: 2])
    }
}
