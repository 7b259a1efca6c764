import Foundation
import Stores
import GRDB
import GRDBSQLite
import VinylogueCore

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
    /// The album artist the listen named (nil when none; a later column).
    public var albumArtist: String?
    /// The release group the listen named (nil when none; a later column).
    public var releaseGroupMBID: String?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id", instant, artist, track, album
        case artistMBID = "artist_mbid", albumMBID = "album_mbid", trackMBID = "track_mbid", origin = "source"
        case albumArtist = "album_artist", releaseGroupMBID = "release_group_mbid"
    }

    /// The value this row stores.
    public var scrobble: Scrobble {
        Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID, albumMBID: albumMBID, trackMBID: trackMBID,
                 albumArtist: albumArtist, releaseGroupMBID: releaseGroupMBID)
    }
}

/// The scrobble archive: per-user scrobbles in the shared database.
///
/// Writes are batched, one transaction per batch, through one prepared
/// `INSERT OR IGNORE`; a batch is either all stored or not at all, and
/// storing the same listen twice (exactly, or from another source a few
/// seconds apart: `sameListenWindow`) is a counted no-op.
public struct SQLiteScrobbleStore: Sendable {
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

    /// Listens set aside as the same play as one that counts (`SameListenRule`):
    /// kept so that a listen arriving later, earlier than the one that
    /// counts, can take its place and bring back the ones after it.
    /// Ids are '' when unknown, so the key holds.
    /// Listens keep the album artist and release group their player named
    /// (`Scrobble.albumArtist`, `Scrobble.releaseGroupMBID`), counted, set
    /// aside and waiting to be forwarded alike; NULL where none was named,
    /// which every listen stored before was. Adding a nullable column
    /// rewrites no row.
    static func registerAlbumArtistMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listens keep their album artist and release group") { db in
            try db.execute(sql: """
                ALTER TABLE scrobble ADD COLUMN album_artist TEXT;
                ALTER TABLE scrobble ADD COLUMN release_group_mbid TEXT;
                ALTER TABLE scrobble_echo ADD COLUMN album_artist TEXT;
                ALTER TABLE scrobble_echo ADD COLUMN release_group_mbid TEXT;
                ALTER TABLE forward_outbox ADD COLUMN album_artist TEXT;
                ALTER TABLE forward_outbox ADD COLUMN release_group_mbid TEXT
                """)
        }
    }

    static func registerEchoMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("scrobble echoes") { db in
            try db.execute(sql: """
                CREATE TABLE scrobble_echo (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    instant INTEGER NOT NULL,
                    artist TEXT NOT NULL,
                    track TEXT NOT NULL,
                    album TEXT NOT NULL,
                    artist_mbid TEXT NOT NULL,
                    album_mbid TEXT NOT NULL,
                    track_mbid TEXT NOT NULL,
                    source INTEGER NOT NULL,
                    PRIMARY KEY (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid)
                ) WITHOUT ROWID
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

    /// Rows per multi-row `INSERT`: one statement step stores this many.
    static let rowsPerStatement = 64

    /// Two plays of one track are one listen when their instants are less
    /// than this many seconds apart (`SameListenRule`).
    public static let sameListenWindow: Int64 = SameListenRule.window

    /// Stores `batch` (each listen with its origin) inside the caller's
    /// transaction by the archive's duplicate rule (`SameListenRule.plan`):
    /// a listen that is the same play as one held counts only if it is the
    /// earlier, and the other is set aside (`scrobble_echo`), so the archive
    /// is the same whatever the order the listens came in; the weeks it
    /// touched are counted again (`WeeklyRollup`). Every import, sync page,
    /// received listen and "Delete what was copied" stores through here:
    /// the one write, as `PostgresScrobbleStore.store(_:userID:_:_:)` is on PostgreSQL.
    static func store(_ batch: [(Scrobble, ScrobbleOrigin)], userID: Int64, in db: Database) throws -> InsertCounts {
        var planning = SameListenPlanning(batch)
        while let ranges = planning.rangesToRead {
            let asking = planning
            planning.answer(held: try held(in: ranges, concerning: asking, userID: userID, in: db))
        }
        let plan = planning.plan!
        try execute(plan, userID: userID, in: db)
        return plan.counts
    }

    /// Every listen of `userID` held with an instant in `ranges` that
    /// concerns the batch being planned (`SameListenPlanning.concerns`): those that count and
    /// those set aside.
    private static func held(in ranges: [ClosedRange<Int64>], concerning planning: SameListenPlanning, userID: Int64,
                             in db: Database) throws -> [HeldListen] {
        // Made at the first row read: a fresh import's batch reads none.
        var concerns: ((String, String) -> Bool)?
        var found: [HeldListen] = []
        for (table, counts) in [("scrobble", true), ("scrobble_echo", false)] {
            let statement = try db.cachedStatement(sql: """
                SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source, album_artist, release_group_mbid
                FROM \(table)
                WHERE user_id = ? AND instant >= ? AND instant <= ?
                """)
            for range in ranges {
                let rows = try Row.fetchCursor(statement, arguments: [userID, range.lowerBound, range.upperBound])
                while let row = try rows.next() {
                    let artist: String = row[1], track: String = row[2]
                    if concerns == nil { concerns = planning.concerns }
                    guard concerns?(artist, track) == true else { continue }
                    let scrobble = Scrobble(instant: row[0], artist: artist, album: row[3], track: track,
                                            artistMBID: row[4], albumMBID: row[5], trackMBID: row[6], albumArtist: row[8],
                                            releaseGroupMBID: row[9])
                    found.append(HeldListen(scrobble, origin: ScrobbleOrigin(rawValue: row[7]) ?? .lastFMExport, counts: counts))
                }
            }
        }
        return found
    }

    /// Carries out `plan`: listens that no longer count leave the charts'
    /// rows for the set-aside ones and the other way round, and the weeks
    /// they touch are counted again, all in the caller's transaction.
    private static func execute(_ plan: SameListenPlan, userID: Int64, in db: Database) throws {
        var touched = TouchedWeeks()
        // Most batches only add listens that count: the other statements
        // are not even looked up.
        if !plan.uncount.isEmpty {
            let uncount = try db.cachedStatement(sql: "DELETE FROM scrobble WHERE user_id = ? AND instant = ? AND artist = ? AND track = ?")
            for s in plan.uncount {
                try uncount.execute(arguments: [userID, s.instant, s.artist, s.track])
                touched.add(perhapsInserted: s)
            }
        }
        if !plan.unsetAside.isEmpty {
            let unsetAside = try db.cachedStatement(sql: """
                DELETE FROM scrobble_echo WHERE user_id = ? AND instant = ? AND artist = ? AND track = ? AND album = ?
                    AND artist_mbid = ? AND album_mbid = ? AND track_mbid = ?
                """)
            for s in plan.unsetAside {
                try unsetAside.execute(arguments: [userID, s.instant, s.artist, s.track, s.album, s.artistMBID ?? "", s.albumMBID ?? "",
                                                   s.trackMBID ?? ""])
            }
        }
        if !plan.setAside.isEmpty {
            let setAside = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO scrobble_echo (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source,
                                                     album_artist, release_group_mbid)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (s, origin) in plan.setAside {
                try setAside.execute(arguments: [userID, s.instant, s.artist, s.track, s.album, s.artistMBID ?? "", s.albumMBID ?? "",
                                                 s.trackMBID ?? "", origin.rawValue, s.albumArtist, s.releaseGroupMBID])
            }
        }
        var counts = InsertCounts()
        var start = plan.count.startIndex
        while start < plan.count.endIndex {
            let origin = plan.count[start].1
            let end = plan.count[start...].firstIndex { $0.1 != origin } ?? plan.count.endIndex
            try insertRows(plan.count[start..<end].lazy.map(\.0), userID: userID, origin: origin, counts: &counts, touched: &touched, in: db)
            start = end
        }
        try WeeklyRollup.recount(touched, userID: userID, in: db)
    }

    /// Inserts `scrobbles` exactly as they are, with no duplicate rule,
    /// leaving alone any row whose key is already stored, and counts again
    /// the weeks they went into, in the caller's transaction. Not the
    /// archive's write (`store(_:userID:in:)`): only the demo's generated
    /// history comes this way, rows that are never near-duplicates of one
    /// another and must be stored as generated, so the rule's reads would
    /// cost without deciding anything (`DemoSeed.storeGenerated`).
    static func insertKeepingExisting(_ scrobbles: some Collection<Scrobble>, userID: Int64, origin: ScrobbleOrigin,
                                      in db: Database) throws -> InsertCounts {
        var counts = InsertCounts()
        var touched = TouchedWeeks()
        try insertRows(scrobbles, userID: userID, origin: origin, counts: &counts, touched: &touched, in: db)
        try WeeklyRollup.recount(touched, userID: userID, in: db)
        return counts
    }

    /// Inserts rows inside the caller's transaction (a step of both writes
    /// above), through the connection's
    /// cached prepared statements, binding values with the SQLite C API
    /// (GRDB's argument arrays would allocate per row). Rows go in groups of
    /// `rowsPerStatement` per statement execution (the user id bound once as
    /// parameter 1, the origin written into the SQL), which roughly halves SQLite's per-row
    /// overhead on bulk imports; each ignored row (the same key exactly) is a
    /// duplicate. The weeks the rows went into are noted in `touched` for
    /// the caller to count again.
    static func insertRows(_ scrobbles: some Collection<Scrobble>, userID: Int64, origin: ScrobbleOrigin, counts: inout InsertCounts,
                           touched: inout TouchedWeeks, in db: Database) throws {
        var rest = scrobbles[...]
        while !rest.isEmpty {
            let size = rest.count >= rowsPerStatement ? rowsPerStatement : 1
            let group = rest.prefix(size)
            rest = rest.dropFirst(size)
            let statement = try db.cachedStatement(sql: insertSQL(rows: size, origin: origin))
            let handle = statement.sqliteStatement
            let connection = db.sqliteConnection
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, userID)
            var index: Int32 = 2
            for s in group {
                sqlite3_bind_int64(handle, index, s.instant)
                bind(s.artist, index + 1, handle)
                bind(s.track, index + 2, handle)
                bind(s.album, index + 3, handle)
                bind(s.artistMBID, index + 4, handle)
                bind(s.albumMBID, index + 5, handle)
                bind(s.trackMBID, index + 6, handle)
                bind(s.albumArtist, index + 7, handle)
                bind(s.releaseGroupMBID, index + 8, handle)
                index += 9
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
            if inserted == size {
                for s in group { touched.add(inserted: s) }
            } else if inserted > 0 {
                // Which rows were ignored is not known: their weeks are read back.
                for s in group { touched.add(perhapsInserted: s) }
            }
        }
    }

    /// The insert of `rows` rows: the user id is parameter 1 in every row
    /// (bound once), each row's values are the next 9. The SQL is the same
    /// for every user, so the connection keeps one compiled statement per
    /// size and origin, however many people it writes for.
    static func insertSQL(rows: Int, origin: ScrobbleOrigin) -> String {
        let row = "(?1, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(origin.rawValue))"
        return "INSERT OR IGNORE INTO scrobble (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, "
            + "release_group_mbid, source) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds `text` (NULL for nil) to parameter `index`, copied by SQLite.
    static func bind(_ text: String?, _ index: Int32, _ handle: OpaquePointer?) {
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
        // Cached statements: every cold chart asks (a prepare each time cost
        // as much as the seeks).
        let first = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(instant) FROM scrobble WHERE user_id = ? AND instant BETWEEN ? AND ?"),
                                       arguments: [userID, low, high])
        let last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(instant) FROM scrobble WHERE user_id = ? AND instant BETWEEN ? AND ?"),
                                      arguments: [userID, low, high])
        guard let first, let last else { return nil }
        return first...last
    }

    static func scrobbles(of user: Username, from: Int64, to: Int64, in db: Database) throws -> [Scrobble] {
        guard let id = try userID(of: user, in: db) else { return [] }
        return try ArchivedScrobble
            .filter(sql: "user_id = ? AND instant >= ? AND instant < ?", arguments: [id, from, to])
            .order(sql: "instant, artist, track")
            .fetchAll(db)
            .map(\.scrobble)
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

    /// A read short enough (a chart, a span: well under a millisecond) to
    /// run where its caller is when that is one of the server's request
    /// threads, which may block (`RequestThreads`): it saves the two thread
    /// wake-ups an awaited read costs, more than the read itself. Anywhere
    /// else it is `readAsync`. `snapshot` false skips the transaction, for
    /// a single statement.
    func shortRead<T: Sendable>(snapshot: Bool = true,
                                _ body: @escaping @Sendable (Database) throws -> T) async throws(SourceError) -> T {
        if let own = database.requestThreadReaders?.connection() { return try read(on: own, snapshot: snapshot, body) }
        return try await snapshot ? readAsync(body) : unsafeReadAsync(body)
    }

    /// A blocking read on `connection`, which runs on the calling thread;
    /// with `snapshot`, in one transaction, begun and ended by cached
    /// statements (GRDB's own `read` parses both each time, a tenth of a
    /// cold chart's work).
    private func read<T>(on connection: DatabaseQueue, snapshot: Bool, _ body: (Database) throws -> T) throws(SourceError) -> T {
        do {
            return try connection.inDatabase { db in
                guard snapshot else { return try body(db) }
                try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
                do {
                    let value = try body(db)
                    try db.cachedStatement(sql: "COMMIT").execute()
                    return value
                } catch {
                    try? db.cachedStatement(sql: "ROLLBACK").execute()
                    throw error
                }
            }
        } catch { throw .storage(detail: "\(error)") }
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

extension SQLiteScrobbleStore: ScrobbleArchive, BlockingScrobbleWriter {
    public func scrobbleCount(of user: Username) async throws(SourceError) -> Int {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scrobble WHERE user_id = ?", arguments: [id]) ?? 0
        }
    }

    public func scrobbles(of user: Username, from: Int64, to: Int64) async throws(SourceError) -> [Scrobble] {
        try await readAsync { db in try Self.scrobbles(of: user, from: from, to: to, in: db) }
    }

    public func recentScrobbles(of user: Username, from: Int64, to: Int64, limit: Int, offset: Int) async throws(SourceError) -> RecentScrobbles {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return RecentScrobbles(total: 0, scrobbles: []) }
            let range = "user_id = ? AND instant >= ? AND instant < ?"
            let total = try ArchivedScrobble.filter(sql: range, arguments: [id, from, to]).fetchCount(db)
            let page = try ArchivedScrobble.filter(sql: range, arguments: [id, from, to])
                .order(sql: "instant DESC, artist DESC, track DESC")
                .limit(max(0, limit), offset: max(0, offset))
                .fetchAll(db).map(\.scrobble)
            return RecentScrobbles(total: total, scrobbles: page)
        }
    }

    public func charts(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart]? {
        // One week is one statement, which reads a consistent snapshot on
        // its own (it saves a BEGIN/COMMIT per chart); several share one.
        if weeks.count == 1 { return try await shortRead(snapshot: false, Self.chartReading(kind, of: user, weeks: weeks)) }
        return try await readAsync(Self.chartReading(kind, of: user, weeks: weeks))
    }

    public func chartReading(_ kind: ChartKind, of user: Username, withCopy: Bool,
                             choosing choose: @escaping @Sendable (ClosedRange<Int64>) -> ChartWeek?) async throws(SourceError) -> ChartReading {
        try await shortRead { db in
            var reading = ChartReading()
            if withCopy { reading.copy = try SQLiteHistoryCopyStore.row(of: user.key, in: db) }
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT u.id, u.name, g.generated_through FROM archive_user u LEFT JOIN generated_history g ON g.user_id = u.id
                WHERE u.name_key = ?
                """), arguments: [user.key]) else { return reading }
            let id: Int64 = row[0]
            reading.generatedThrough = row[2]
            reading.span = try Self.span(userID: id, in: db)
            // Held but all outside plausible time (no span): asked apart, as `storedName` does.
            let holds = try reading.span != nil
                || Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM scrobble WHERE user_id = ?)", arguments: [id]) == true
            if holds { reading.storedName = Username(validating: row[1]) }
            if let span = reading.span, let week = choose(span) {
                reading.chart = try Self.charts(kind, user: user, userID: id, weeks: [week], in: db).first
            }
            return reading
        }
    }

    public func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>? {
        try await unsafeReadAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try WeeklyRollup.albumsPlayed(userID: id, since: from, in: db)
        }
    }

    public func albumSpellings(of user: Username) async throws(SourceError) -> [SpelledAlbum]? {
        try await unsafeReadAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            let rows = try Row.fetchCursor(db, sql: """
                SELECT coalesce(album_artist, artist), album, count(*) FROM scrobble WHERE user_id = ? AND album <> ''
                GROUP BY coalesce(album_artist, artist), album
                """, arguments: [id])
            var spellings: [SpelledAlbum.Spelling] = []
            while let row = try rows.next() { spellings.append(SpelledAlbum.Spelling(artist: row[0], album: row[1], plays: row[2])) }
            return SpelledAlbum.grouped(spellings, folding: try WeeklyRollup.folding(userID: id, in: db))
        }
    }

    public func albumSpellings(of user: Username, artist: String, album: String) async throws(SourceError) -> SpelledAlbum? {
        try await unsafeReadAsync { db in
            guard !album.isEmpty, let id = try Self.userID(of: user, in: db) else { return nil }
            let folding = try WeeklyRollup.folding(userID: id, in: db)
            var counting = SpelledAlbum.Counting(key: folding.folded(.album, artist: artist, name: album).key, folding: folding)
            let weeks = try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT week FROM weekly_chart INDEXED BY weekly_chart_album WHERE user_id = ? AND album_key = ? ORDER BY week
                """), arguments: [id, counting.key])
            // Each week's plays per spelling, counted by SQLite.
            let counted = try db.cachedStatement(sql: """
                SELECT coalesce(album_artist, artist), album, count(*) FROM scrobble
                WHERE user_id = ? AND instant >= ? AND instant < ? AND album <> '' GROUP BY coalesce(album_artist, artist), album
                """)
            for week in weeks {
                let rows = try Row.fetchCursor(counted, arguments: [id, week, WeeklyRollup.end(of: week)])
                while let row = try rows.next() { counting.add(artist: row[0], album: row[1], plays: row[2]) }
            }
            return counting.album
        }
    }

    public func albumWeeks(of user: Username, artist: String, album name: String) async throws(SourceError) -> [AlbumWeek]? {
        try await unsafeReadAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try WeeklyRollup.albumWeeks(userID: id, artist: artist, album: name, in: db)
        }
    }

    /// The same charts as `charts(_:of:weeks:)`, read on the calling thread.
    /// It blocks: only for threads of one's own (`vinylogue bench` uses it
    /// to time the query apart from the hop to GRDB's queue and back),
    /// never on Swift's cooperative pool.
    public func chartsBlocking(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) throws(SourceError) -> [WeeklyChart]? {
        try read(Self.chartReading(kind, of: user, weeks: weeks))
    }

    /// A few listens (a player's) go through the database's `GroupCommit`:
    /// a batch that arrives while others are written shares their
    /// transaction (each in a savepoint of its own) and their commit. A
    /// bigger batch has a transaction of its own: sharing would make each
    /// wait for the others' work, and its commit is a small part of its cost.
    public func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) async throws(SourceError) -> InsertCounts {
        guard batch.count <= Self.sharedCommitLimit else {
            return try await writeAsync { db in try Self.store(batch, of: user, fence: fence, in: db) }
        }
        do {
            return try await database.groupCommit.write { db in try Self.store(batch, of: user, fence: fence, in: db) }
        } catch {
            throw ArchiveDatabase.failure(error)
        }
    }

    /// The most scrobbles a batch may have to share a transaction with others.
    static let sharedCommitLimit = 50

    /// Stores a batch the way `store(_:of:)` does, on the calling thread
    /// (the importer's writer queue).
    public func storeBlocking(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) throws(SourceError) -> InsertCounts {
        try write { db in try Self.store(batch, of: user, fence: fence, in: db) }
    }

    static func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence? = nil, in db: Database) throws -> InsertCounts {
        // The user row is written with the first batch, so a file that
        // holds no scrobbles leaves nothing behind.
        guard !batch.isEmpty else { return InsertCounts() }
        try Self.hold(fence, in: db)
        let userID = try ensureUserID(of: user, in: db)
        let counts = try store(batch, userID: userID, in: db)
        if case let (upload, entry)? = fence?.storedBatch(size: batch.count, counts: counts) {
            // The upload's progress, in the batch's own transaction (the
            // fence above found its job claimed by this holder).
            try db.execute(sql: "UPDATE import_job SET stored_batches = stored_batches || ? WHERE id = ?", arguments: [entry, upload])
        }
        return counts
    }

    public func syncStart(of user: Username) async throws(SourceError) -> SyncStart {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return SyncStart() }
            // A damaged row with an absurd time must not count (nor overflow below).
            let origins = ScrobbleOrigin.copies(of: user)
            let newest = try Int64.fetchOne(db, sql: """
                SELECT MAX(instant) FROM scrobble WHERE user_id = ? AND source IN (?, ?) AND instant BETWEEN ? AND ?
                """, arguments: [id, origins[0].rawValue, origins[1].rawValue,
                                 PlausibleTime.archived.lowerBound, PlausibleTime.archived.upperBound])
            let pending = try Row.fetchOne(db, sql: """
                SELECT from_instant, to_instant, next_page, total_pages, page_size FROM sync_state WHERE user_id = ?
                """, arguments: [id]).map { row in
                SyncState(fromInstant: row[0], toInstant: row[1], nextPage: row[2], totalPages: row[3], pageSize: row[4])
            }
            return SyncStart(pending: pending, newestFromLastFM: newest)
        }
    }

    public func beginSync(_ state: SyncState, of user: Username, fence: JobFence?) async throws(SourceError) {
        try await writeAsync { db in
            try Self.hold(fence, in: db)
            try Self.save(state, userID: try Self.ensureUserID(of: user, in: db), in: db)
        }
    }

    public func storeSyncPage(_ scrobbles: [Scrobble], of user: Username, next: SyncState?, fence: JobFence?) async throws(SourceError) -> InsertCounts {
        try await writeAsync { db in
            try Self.hold(fence, in: db)
            let id = try Self.ensureUserID(of: user, in: db)
            let counts = try Self.store(scrobbles.map { ($0, ScrobbleOrigin.sync(of: user)) }, userID: id, in: db)
            if let next {
                try Self.save(next, userID: id, in: db)
            } else {
                try db.execute(sql: "DELETE FROM sync_state WHERE user_id = ?", arguments: [id])
            }
            return counts
        }
    }

    /// Throws `SourceError.cancelled` inside the caller's write unless
    /// `fence`'s job is still claimed and running (`JobFence`); SQLite's
    /// one writer orders the check against every deletion.
    static func hold(_ fence: JobFence?, in db: Database) throws {
        guard let fence else { return }
        let row = fence.row
        let key: any DatabaseValueConvertible = switch row.key {
        case .text(let text): text
        case .integer(let id): id
        }
        let held = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(row.table) WHERE \(row.column) = ? AND holder = ? AND state = ?",
                                     arguments: [key, fence.holder, row.running]) ?? false
        if !held { throw fence.cancellation }
    }

    private static func save(_ state: SyncState, userID: Int64, in db: Database) throws {
        try db.execute(sql: """
            INSERT INTO sync_state (user_id, from_instant, to_instant, next_page, total_pages, page_size) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(user_id) DO UPDATE SET from_instant = excluded.from_instant, to_instant = excluded.to_instant,
                next_page = excluded.next_page, total_pages = excluded.total_pages, page_size = excluded.page_size
            """, arguments: [userID, state.fromInstant, state.toInstant, state.nextPage, state.totalPages, state.pageSize])
    }

    /// SQLite's queries name their indexes where it matters (the album
    /// index) and need no statistics: nothing to do.
    public func importFinished(inserted: Int) async throws(SourceError) {}

    public func forgetCopy(of user: Username) async throws(SourceError) -> Int {
        try await writeAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return 0 }
            let source = ScrobbleOrigin.sync(of: user).rawValue
            let columns = "instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid"
            func scrobble(_ row: Row) -> Scrobble {
                // The echo table keeps unknown ids as ''.
                func id(_ column: String) -> String? { (row[column] as String?).flatMap { $0.isEmpty ? nil : $0 } }
                return Scrobble(instant: row["instant"], artist: row["artist"], album: row["album"], track: row["track"],
                                artistMBID: id("artist_mbid"), albumMBID: id("album_mbid"), trackMBID: id("track_mbid"),
                                albumArtist: row["album_artist"], releaseGroupMBID: row["release_group_mbid"])
            }
            let copied = try Row.fetchAll(db, sql: "SELECT \(columns) FROM scrobble WHERE user_id = ? AND source = ?", arguments: [id, source])
            try db.execute(sql: "DELETE FROM scrobble WHERE user_id = ? AND source = ?", arguments: [id, source])
            try db.execute(sql: "DELETE FROM scrobble_echo WHERE user_id = ? AND source = ?", arguments: [id, source])
            try db.execute(sql: "DELETE FROM sync_state WHERE user_id = ?", arguments: [id])
            var touched = TouchedWeeks()
            for row in copied { touched.add(removed: scrobble(row)) }
            try WeeklyRollup.recount(touched, userID: id, in: db)
            // What was set aside is decided again, now the copies are gone.
            let setAside = try Row.fetchAll(db, sql: "SELECT \(columns), source FROM scrobble_echo WHERE user_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM scrobble_echo WHERE user_id = ?", arguments: [id])
            _ = try Self.store(setAside.map { (scrobble($0), ScrobbleOrigin(rawValue: $0["source"]) ?? .lastFMExport) }, userID: id, in: db)
            return copied.count
        }
    }

    public func generatedThrough(of user: Username) async throws(SourceError) -> Int64? {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT generated_through FROM generated_history WHERE user_id = ?", arguments: [id])
        }
    }

    public func storeGenerated(_ scrobbles: [Scrobble], of user: Username, through: Int64, seed: Int64,
                               firstWeek: Int64) async throws(SourceError) -> Int {
        try await writeAsync { db in
            let id = try Self.ensureUserID(of: user, in: db)
            let counts = try Self.insertKeepingExisting(scrobbles, userID: id, origin: .demo, in: db)
            try db.execute(sql: """
                INSERT INTO generated_history (user_id, seed, first_week, generated_through) VALUES (?, ?, ?, ?)
                ON CONFLICT(user_id) DO UPDATE SET generated_through = excluded.generated_through
                """, arguments: [id, seed, firstWeek, through])
            return counts.inserted
        }
    }
}
