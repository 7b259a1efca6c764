import Foundation
import GRDB
import GRDBSQLite
import VinylogueCore

/// Where an archived scrobble came from.
public enum ScrobbleOrigin: Int, Sendable, Codable, CaseIterable {
    case lastFMSync = 1
    case lastFMExport = 2
    case listenBrainz = 3
    case spotify = 4
    case demo = 5
    case maloja = 6
    /// A portable player's `.scrobbler.log` (Rockbox).
    case scrobblerLog = 7
}

/// A person whose scrobbles are archived. Scrobble rows carry this small
/// integer instead of repeating the username.
public struct ArchiveUser: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "archive_user"
    public var id: Int64?
    /// `Username.key`: the case-folded name, unique.
    public var nameKey: String
    /// The name as first written.
    public var name: String

    enum CodingKeys: String, CodingKey { case id, nameKey = "name_key", name }
}

/// One archived scrobble row, as stored.
///
/// The table is `WITHOUT ROWID` with the dedupe key (user, instant, artist,
/// track) as its primary key: the key is the unique index, and rows are
/// clustered by user and time, so a week's rows are one contiguous range
/// of the table itself (a covering scan with no second index to maintain).
public struct ArchivedScrobble: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "scrobble"
    public var userID: Int64
    public var instant: Int64
    public var artist: String
    public var track: String
    public var album: String
    public var artistMBID: String?
    public var albumMBID: String?
    public var trackMBID: String?
    public var origin: ScrobbleOrigin

    enum CodingKeys: String, CodingKey {
        case userID = "user_id", instant, artist, track, album
        case artistMBID = "artist_mbid", albumMBID = "album_mbid", trackMBID = "track_mbid", origin = "source"
    }

    /// The value this row stores.
    public var scrobble: Scrobble {
        Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID, albumMBID: albumMBID, trackMBID: trackMBID)
    }
}

/// How a batch of inserts went.
public struct InsertCounts: Sendable, Hashable {
    public var inserted = 0
    /// Rows whose dedupe key was already archived.
    public var duplicates = 0

    public init(inserted: Int = 0, duplicates: Int = 0) {
        self.inserted = inserted
        self.duplicates = duplicates
    }

    public static func += (lhs: inout InsertCounts, rhs: InsertCounts) {
        lhs.inserted += rhs.inserted
        lhs.duplicates += rhs.duplicates
    }
}

/// The scrobble archive: per-user scrobbles in the shared database.
///
/// Writes are batched, one transaction per batch, through one prepared
/// `INSERT OR IGNORE`; a batch is either all stored or not at all, and
/// storing the same listen twice (exactly, or from another source a few
/// seconds apart: `sameListenWindow`) is a counted no-op.
public struct ScrobbleStore: Sendable {
    public let database: ArchiveDatabase

    public init(database: ArchiveDatabase) { self.database = database }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("scrobble archive v1") { db in
            try db.execute(sql: """
                CREATE TABLE archive_user (
                    id INTEGER PRIMARY KEY,
                    name_key TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL
                );
                CREATE TABLE scrobble (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    instant INTEGER NOT NULL,
                    artist TEXT NOT NULL,
                    track TEXT NOT NULL,
                    album TEXT NOT NULL,
                    artist_mbid TEXT,
                    album_mbid TEXT,
                    track_mbid TEXT,
                    source INTEGER NOT NULL,
                    PRIMARY KEY (user_id, instant, artist, track)
                ) WITHOUT ROWID;
                CREATE TABLE sync_state (
                    user_id INTEGER PRIMARY KEY REFERENCES archive_user(id) ON DELETE CASCADE,
                    from_instant INTEGER NOT NULL,
                    to_instant INTEGER NOT NULL,
                    next_page INTEGER NOT NULL,
                    total_pages INTEGER NOT NULL,
                    page_size INTEGER NOT NULL
                );
                CREATE TABLE generated_history (
                    user_id INTEGER PRIMARY KEY REFERENCES archive_user(id) ON DELETE CASCADE,
                    seed INTEGER NOT NULL,
                    first_week INTEGER NOT NULL,
                    generated_through INTEGER NOT NULL
                );
                """)
        }
    }

    // MARK: - Users

    /// The archive's id for `user`, or `nil` when nothing was ever stored.
    public func userID(of user: Username) throws(SourceError) -> Int64? {
        try read { db in try Self.userID(of: user, in: db) }
    }

    /// The name as the archive stores it, when the archive holds at least
    /// one scrobble for `user`; `nil` otherwise. A user row alone (a sync
    /// that failed before its first page was stored) does not count.
    ///
    /// Awaits GRDB's own reader queue: a synchronous read here blocked the
    /// cooperative pool's threads while every pooled reader was taken, and
    /// with two cores about ten concurrent pages deadlocked the server.
    public func storedName(of user: Username) async throws(SourceError) -> Username? {
        try await readAsync { db in
            try String.fetchOne(db.cachedStatement(sql: """
                SELECT u.name FROM archive_user u
                WHERE u.name_key = ? AND EXISTS (SELECT 1 FROM scrobble s WHERE s.user_id = u.id)
                """), arguments: [user.key])
                .flatMap(Username.init(validating:))
        }
    }

    static func userID(of user: Username, in db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM archive_user WHERE name_key = ?"), arguments: [user.key])
    }

    static func ensureUserID(of user: Username, in db: Database) throws -> Int64 {
        if let id = try userID(of: user, in: db) { return id }
        try ArchiveUser(id: nil, nameKey: user.key, name: user.value).insert(db)
        return db.lastInsertedRowID
    }

    // MARK: - Writing

    /// Stores `scrobbles` for `user` in one transaction.
    @discardableResult
    public func insert(_ scrobbles: some Collection<Scrobble>, for user: Username, origin: ScrobbleOrigin) throws(SourceError) -> InsertCounts {
        try write { db in
            let id = try Self.ensureUserID(of: user, in: db)
            return try Self.insertDistinct(scrobbles, userID: id, origin: origin, in: db)
        }
    }

    /// Rows per multi-row `INSERT`: one statement step stores this many.
    static let rowsPerStatement = 64

    /// Two plays of one track are one listen when their instants are less
    /// than this many seconds apart (and artist and track match without
    /// regard to case). See `docs/ARCHIVE.md`, "Duplicates across sources".
    public static let sameListenWindow: Int64 = 60

    /// Inserts inside the caller's transaction, leaving out every scrobble
    /// that is the same listen as one already archived for the user or one
    /// earlier in `scrobbles`: same artist and same track, compared without
    /// regard to case (Swift's Unicode lowercasing, as charts merge them),
    /// instants less than `sameListenWindow` seconds apart. Left-out rows
    /// are counted as duplicates. Every import and every sync stores
    /// through here.
    ///
    /// The archived rows near the new ones are read with one range scan per
    /// run of new instants (a run ends at a gap of over an hour), so a
    /// batch of an export (a few weeks of listening) costs a handful of
    /// index seeks, and the check itself is a merge of two sorted lists.
    static func insertDistinct(_ scrobbles: some Collection<Scrobble>, userID: Int64, origin: ScrobbleOrigin, in db: Database) throws -> InsertCounts {
        var sorted = Array(scrobbles)
        if zip(sorted, sorted.dropFirst()).contains(where: { $0.instant > $1.instant }) { sorted.sort { $0.instant < $1.instant } }
        let nearby = try archivedNear(sorted, userID: userID, in: db)
        let window = sameListenWindow
        var fresh: [Scrobble] = []
        fresh.reserveCapacity(sorted.count)
        var duplicates = 0
        var low = 0, recentStart = 0
        for s in sorted {
            while low < nearby.count, nearby[low].instant <= s.instant.minus(window) { low += 1 }
            var same = false
            var i = low
            while i < nearby.count, nearby[i].instant < s.instant.plus(window) {
                if nearby[i].isSameListen(as: s) { same = true; break }
                i += 1
            }
            if !same {
                while recentStart < fresh.count, fresh[recentStart].instant <= s.instant.minus(window) { recentStart += 1 }
                var j = recentStart
                while j < fresh.count {
                    if fresh[j].isSameListen(as: s) { same = true; break }
                    j += 1
                }
            }
            if same { duplicates += 1 } else { fresh.append(s) }
        }
        var counts = try insert(fresh, userID: userID, origin: origin, in: db)
        counts.duplicates += duplicates
        return counts
    }

    /// The archived scrobbles of `userID` within `sameListenWindow` of any
    /// of `sorted` (ascending), in time order.
    private static func archivedNear(_ sorted: [Scrobble], userID: Int64, in db: Database) throws -> [Scrobble] {
        guard let first = sorted.first else { return [] }
        let statement = try db.cachedStatement(sql: """
            SELECT instant, artist, track FROM scrobble WHERE user_id = ? AND instant > ? AND instant < ? ORDER BY instant
            """)
        var found: [Scrobble] = []
        var runStart = first.instant, runEnd = first.instant
        func scan() throws {
            let rows = try Row.fetchCursor(statement, arguments: [userID, runStart.minus(sameListenWindow), runEnd.plus(sameListenWindow)])
            while let row = try rows.next() {
                found.append(Scrobble(instant: row[0], artist: row[1], album: "", track: row[2]))
            }
        }
        for s in sorted.dropFirst() {
            if s.instant > runEnd.plus(3600) {
                try scan()
                runStart = s.instant
            }
            runEnd = s.instant
        }
        try scan()
        return found
    }

    /// Inserts inside the caller's transaction, through the connection's
    /// cached prepared statements, binding values with the SQLite C API
    /// (GRDB's argument arrays would allocate per row). Rows go in groups of
    /// `rowsPerStatement` per statement execution (with the user id and
    /// origin written into the SQL), which roughly halves SQLite's per-row
    /// overhead on bulk imports; each ignored row (the same key exactly) is a
    /// duplicate. No near-duplicate check (the generated demo history uses
    /// it as it is); imports and syncs go through `insertDistinct`.
    static func insert(_ scrobbles: some Collection<Scrobble>, userID: Int64, origin: ScrobbleOrigin, in db: Database) throws -> InsertCounts {
        var counts = InsertCounts()
        var rest = scrobbles[...]
        while !rest.isEmpty {
            let size = rest.count >= rowsPerStatement ? rowsPerStatement : 1
            let group = rest.prefix(size)
            rest = rest.dropFirst(size)
            let statement = try db.cachedStatement(sql: insertSQL(rows: size, userID: userID, origin: origin))
            let handle = statement.sqliteStatement
            let connection = db.sqliteConnection
            sqlite3_reset(handle)
            var index: Int32 = 1
            for s in group {
                sqlite3_bind_int64(handle, index, s.instant)
                bind(s.artist, index + 1, handle)
                bind(s.track, index + 2, handle)
                bind(s.album, index + 3, handle)
                bind(s.artistMBID, index + 4, handle)
                bind(s.albumMBID, index + 5, handle)
                bind(s.trackMBID, index + 6, handle)
                index += 7
            }
            let code = sqlite3_step(handle)
            guard code == SQLITE_DONE else {
                let message = String(cString: sqlite3_errmsg(connection))
                sqlite3_reset(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            let inserted = Int(sqlite3_changes(connection))
            counts.inserted += inserted
            counts.duplicates += size - inserted
            sqlite3_reset(handle)
        }
        return counts
    }

    static func insertSQL(rows: Int, userID: Int64, origin: ScrobbleOrigin) -> String {
        let row = "(\(userID), ?, ?, ?, ?, ?, ?, ?, \(origin.rawValue))"
        return "INSERT OR IGNORE INTO scrobble (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bind(_ text: String?, _ index: Int32, _ handle: OpaquePointer?) {
        guard var text else { sqlite3_bind_null(handle, index); return }
        text.withUTF8 { bytes in
            if let base = bytes.baseAddress {
                _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                    sqlite3_bind_text(handle, index, chars, Int32(bytes.count), transient)
                }
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, transient)
            }
        }
    }

    // MARK: - Reading

    /// How many scrobbles are archived for `user`.
    public func count(for user: Username) throws(SourceError) -> Int {
        try read { db in
            guard let id = try Self.userID(of: user, in: db) else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scrobble WHERE user_id = ?", arguments: [id]) ?? 0
        }
    }

    /// The first and last archived instants of `user` within
    /// `PlausibleTime.archived`, if any.
    public func span(for user: Username) async throws(SourceError) -> ClosedRange<Int64>? {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Self.span(userID: id, in: db)
        }
    }

    static func span(userID: Int64, in db: Database) throws -> ClosedRange<Int64>? {
        // Two index seeks: MIN and MAX on the primary key's second column
        // with the first one fixed. Rows outside `PlausibleTime.archived`
        // (damaged, or stored before imports checked times) are left out, so
        // one bad row cannot stretch a user's weeks over billions of years.
        let (low, high) = (PlausibleTime.archived.lowerBound, PlausibleTime.archived.upperBound)
        let first = try Int64.fetchOne(db, sql: "SELECT MIN(instant) FROM scrobble WHERE user_id = ? AND instant BETWEEN ? AND ?",
                                       arguments: [userID, low, high])
        let last = try Int64.fetchOne(db, sql: "SELECT MAX(instant) FROM scrobble WHERE user_id = ? AND instant BETWEEN ? AND ?",
                                      arguments: [userID, low, high])
        guard let first, let last else { return nil }
        return first...last
    }

    /// Every archived scrobble of `user` in `[from, to)`, in time order.
    public func scrobbles(for user: Username, from: Int64, to: Int64) throws(SourceError) -> [Scrobble] {
        try read { db in
            guard let id = try Self.userID(of: user, in: db) else { return [] }
            return try ArchivedScrobble
                .filter(sql: "user_id = ? AND instant >= ? AND instant < ?", arguments: [id, from, to])
                .order(sql: "instant, artist, track")
                .fetchAll(db)
                .map(\.scrobble)
        }
    }

    // MARK: - Plumbing

    func read<T>(_ body: (Database) throws -> T) throws(SourceError) -> T {
        do { return try database.writer.read(body) } catch { throw .storage(detail: "\(error)") }
    }

    /// A read outside an explicit transaction, awaited: for single-statement
    /// reads where a snapshot across statements does not matter (it saves a
    /// BEGIN/COMMIT per chart).
    func unsafeReadAsync<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SourceError) -> T {
        do { return try await database.writer.unsafeRead(body) } catch { throw .storage(detail: "\(error)") }
    }

    /// A read on GRDB's reader queue, awaited: what async callers (the web
    /// app above all) must use, so a busy database never holds one of Swift's
    /// few cooperative threads.
    func readAsync<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SourceError) -> T {
        do { return try await database.writer.read(body) } catch { throw .storage(detail: "\(error)") }
    }

    func write<T>(_ body: (Database) throws -> T) throws(SourceError) -> T {
        do { return try database.writer.write(body) } catch { throw ArchiveDatabase.failure(error) }
    }

    /// A write on GRDB's writer queue, awaited: for async callers, so waiting
    /// for the writer never holds one of Swift's cooperative threads.
    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SourceError) -> T {
        do { return try await database.writer.write(body) } catch { throw ArchiveDatabase.failure(error) }
    }
}

extension Scrobble {
    /// The archive's duplicate rule: same artist and track without regard
    /// to case, instants less than `ScrobbleStore.sameListenWindow` apart.
    func isSameListen(as other: Scrobble) -> Bool {
        max(instant, other.instant).minus(min(instant, other.instant)) < ScrobbleStore.sameListenWindow
            && Self.sameName(artist, other.artist) && Self.sameName(track, other.track)
    }

    private static func sameName(_ a: String, _ b: String) -> Bool {
        a == b || a.lowercased() == b.lowercased()
    }
}

extension Int64 {
    /// Saturating arithmetic: a damaged row's instant may sit at either end of `Int64`.
    func plus(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    func minus(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : difference
    }
}
