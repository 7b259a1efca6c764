import Foundation
import Stores
import GRDB
import VinylogueCore

/// The one SQLite database under the data directory: favourite users,
/// settings, the Last.fm response cache, and the scrobble archive.
///
/// Opened in WAL mode through a `DatabasePool`, so readers never wait for a
/// writer; every write is a transaction, so a crash loses at most the
/// transaction in progress. Schema changes go through `migrator`, one named
/// migration per change, never edited after it lands.
public final class ArchiveDatabase: Sendable {
    public let writer: any DatabaseWriter
    /// Small writes that arrive together share one transaction and its
    /// commit (received listens, their outbox rows).
    public let groupCommit: GroupCommit
    /// The file, or `nil` for an in-memory database.
    public let path: String?
    /// A connection for each of the server's request threads, on which a
    /// short read runs where its caller is (`SQLiteScrobbleStore.shortRead`);
    /// nil to always read on GRDB's readers.
    let requestThreadReaders: RequestThreadReaders?

    /// Opens (creating when missing) `vinylogue.sqlite` in `directory`;
    /// a long migration tells `progress` how far it is. Short reads asked
    /// on one of `requestThreads` run there.
    public init(directory: URL, progress: MigrationProgress? = nil, requestThreads: RequestThreads? = nil) throws(SourceError) {
        do {
            // Its files hold people's sessions and servers' passwords: only
            // the user running Vinylogue may enter a directory it makes.
            if !FileManager.default.fileExists(atPath: directory.path) {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            if StorageFailure.posixCode(of: error) == ENOSPC { throw .diskFull(detail: "\(directory.path) could not be created") }
            throw .storage(detail: "\(directory.path) could not be created: \(StorageFailure.obstacle(to: directory) ?? StorageFailure.reason(error))")
        }
        let path = directory.appendingPathComponent(Self.fileName).path
        do {
            // Made by Vinylogue, the database is its user's alone (0600), in
            // a directory made by someone else too; SQLite gives its
            // journal files (-wal, -shm) the database file's mode.
            Self.makeOwnersOnly(path)
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.prepareDatabase { db in
                // The writer's page cache holds what a batch of an import
                // touches (its scrobbles' pages, the weeks' charts, the
                // indexes): with SQLite's default 2 MB it spilled and
                // re-read pages within each batch, 200,000 writes and
                // 170,000 reads for 300,000 scrobbles. Readers keep the
                // default: each reads a few pages per question.
                if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -\(Self.writerCacheKiB)") }
            }
            // GRDB's migrator reads which migrations are applied, then runs
            // each missing one in its own transaction: two processes opening
            // a new directory at once both see none applied and the second
            // fails on "table already exists". An exclusive lock on the
            // directory makes the later opener wait, then find them applied.
            let pool = try MigrationLock(directory: directory).holding {
                let pool = try DatabasePool(path: path, configuration: configuration)
                try Self.syncEveryCommit(pool)
                try Self.migrator(progress: progress).migrate(pool)
                return pool
            }
            self.writer = pool
            self.groupCommit = GroupCommit(writer: pool)
            self.path = path
            self.requestThreadReaders = requestThreads.map { RequestThreadReaders(threads: $0, path: path, configuration: configuration) }
        } catch {
            throw Self.failure(error, path: path)
        }
    }

    /// The `SourceError` for a database failure: a full disk is said to be
    /// one (SQLITE_FULL, ENOSPC), not "could not be opened or read".
    static func failure(_ error: any Error, path: String? = nil) -> SourceError {
        guard let database = error as? DatabaseError else { return StorageFailure.failure(error, path: path) }
        let prefix = path.map { "\($0): " } ?? ""
        if database.resultCode == .SQLITE_FULL {
            return .diskFull(detail: prefix + (database.message ?? "database or disk is full"))
        }
        return .storage(detail: prefix + (database.message ?? "SQLite error \(database.resultCode.rawValue)"))
    }

    /// Makes every commit wait for the disk (`PRAGMA synchronous = FULL`
    /// on the one writer connection), so that a write acknowledged as
    /// stored survives a power cut, not only a killed process.
    ///
    /// GRDB's pool sets `synchronous = NORMAL` when it turns WAL on, after
    /// `prepareDatabase` has run: in WAL mode NORMAL syncs only at
    /// checkpoints, and a commit returns with its pages still in the
    /// kernel's cache. So it is set here, once the pool is open; the
    /// setting belongs to the connection, which the pool keeps for good.
    static func syncEveryCommit(_ pool: DatabasePool) throws {
        try pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
    }

    /// The writer connection's `PRAGMA synchronous` (2 is FULL).
    public func writerSynchronousLevel() async throws -> Int {
        try await writer.barrierWriteWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        }
    }

    /// The writer connection's page cache, in KiB.
    static let writerCacheKiB = 16 * 1024

    /// The database's file in its data directory.
    static let fileName = "vinylogue.sqlite"

    /// Makes an empty database file at `path`, readable by its owner only
    /// (0600), unless there is one (O_EXCL: one another process has just
    /// made is never replaced). SQLite gives the journals the file's mode.
    static func makeOwnersOnly(_ path: String) {
        let made = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if made >= 0 { close(made) }
    }

    /// Whether the database answers a trivial read now.
    public func isReadable() async -> Bool {
        (try? await writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) != nil
    }

    /// Whether `directory` holds a Vinylogue database already.
    public static func exists(in directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(fileName).path)
    }

    /// An in-memory database, for tests.
    public init(inMemory: Void = ()) throws {
        let queue = try DatabaseQueue()
        try Self.migrator(progress: nil).migrate(queue)
        self.writer = queue
        self.groupCommit = GroupCommit(writer: queue)
        self.path = nil
        self.requestThreadReaders = nil
    }

    /// Every schema change, in order. Append; never edit a landed migration.
    static func migrator(progress: MigrationProgress?) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        SQLiteListStore.registerMigrations(in: &migrator)
        ResponseCacheTable.registerMigrations(in: &migrator)
        SQLiteScrobbleStore.registerMigrations(in: &migrator)
        SQLiteListStore.registerOwnerMigrations(in: &migrator)
        SQLiteAccountStore.registerMigrations(in: &migrator)
        WeeklyRollup.registerMigrations(in: &migrator, progress: progress)
        SQLiteAlbumCoverStore.registerMigrations(in: &migrator)
        SQLiteListenTokenStore.registerMigrations(in: &migrator)
        SQLiteMobileSessionStore.registerMigrations(in: &migrator)
        SQLiteForwardingOutbox.registerMigrations(in: &migrator)
        SQLiteScrobbleStore.registerEchoMigration(in: &migrator)
        SQLiteHistoryCopyStore.registerMigrations(in: &migrator)
        SQLiteHistoryCopyStore.registerTotalsMigration(in: &migrator)
        SQLiteImportJobStore.registerMigrations(in: &migrator)
        SQLiteAccountStore.registerVisibilityMigration(in: &migrator)
        SQLiteDigestStore.registerMigrations(in: &migrator)
        SQLiteImportJobStore.registerStoredBatchesMigration(in: &migrator)
        SQLiteJobQueue.registerMigrations(in: &migrator)
        SQLiteHistoryCopyStore.registerJobQueueMigration(in: &migrator)
        SQLiteForwardingOutbox.registerJobQueueMigration(in: &migrator)
        SQLiteDigestStore.registerJobQueueMigration(in: &migrator)
        WeeklyRollup.registerFoldedMigration(in: &migrator, progress: progress)
        SQLiteScrobbleStore.registerAlbumChoiceMigrations(in: &migrator)
        SQLiteScrobbleStore.registerAlbumReleaseMigration(in: &migrator)
        SQLiteScrobbleStore.registerAlbumArtistMigration(in: &migrator)
        SQLiteScrobbleStore.registerReleaseKeyIndexMigration(in: &migrator)
        SQLiteMusicServers.registerMigration(in: &migrator)
        return migrator
    }

    /// The default data directory: `$XDG_DATA_HOME/vinylogue`, else
    /// `~/.local/share/vinylogue`.
    public static func defaultDirectory(environment: [String: String]) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("vinylogue")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/vinylogue")
    }
}

/// An exclusive `flock` on the data directory, held while the database is
/// opened and migrated. Other processes (and other openers in this one:
/// each holds its own open file description) wait for it; the kernel drops
/// it if the holder dies, so a killed process never leaves it stuck.
struct MigrationLock {
    let directory: URL

    func holding<T>(_ body: () throws -> T) throws -> T {
        let fd = open(directory.path, O_RDONLY)
        // Without a descriptor there is nothing to lock; opening the
        // database below then reports the real problem.
        guard fd >= 0 else { return try body() }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { return try body() }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
