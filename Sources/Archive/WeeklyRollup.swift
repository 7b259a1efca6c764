import Foundation
import GRDB
import GRDBSQLite
import VinylogueCore

/// Plays per (Last.fm week, chart kind, exact spelling): the weekly rollups
/// a chart is read from instead of the week's scrobbles.
///
/// A week's data never changes once it has been stored except by new
/// scrobbles, so rollups are kept by addition: every write adds the plays
/// of the rows it actually inserted (a re-import that adds nothing touches
/// nothing). A write whose rows were partly ignored (an exact key already
/// archived, which only unchecked writes such as the demo can meet) has
/// its weeks counted again from the scrobbles instead. Rollups keep exact
/// spellings, as the scrobbles do; charts merge them case-insensitively
/// with `SpellingCounts`, so a chart from rollups equals one from the rows.
///
/// Album rows also carry the album's case-insensitive key
/// (`ScrobbleTally.key`, Swift's case folding, never a database's), indexed,
/// so an album's whole life is one range of an index. Both stores keep
/// rollups counted here, in Swift.
public struct WeeklyRollup: Sendable {
    public struct Key: Hashable, Sendable {
        public let week: Int64
        public let kind: ChartKind
        public let artist: String
        public let name: String

        /// The album's case-insensitive key, for album rows.
        public var albumKey: String? { kind == .album ? ScrobbleTally.key(.album, artist: artist, album: name, track: "") : nil }
    }

    public struct Plays: Sendable {
        public var count = 0
        /// The MusicBrainz id of the earliest play that has one, and its time
        /// (`WeeklyRollupCharts.noIDInstant` when none has).
        public var mbid: String?
        public var mbidInstant = Int64.max
    }

    public private(set) var entries: [Key: Plays] = [:]

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// The kinds rollups are kept for. Track charts are counted from the
    /// scrobbles: a week rarely repeats a track, so track rollups would be
    /// nearly a row per scrobble (they were 78% of all rollup rows and most
    /// of an import's time) and read no faster than the week's scrobbles.
    public static let kinds: Set<ChartKind> = [.album, .artist]

    /// Counts one scrobble in each kind rollups are kept for (album charts
    /// leave out scrobbles without an album, as Last.fm's do).
    public mutating func add(_ s: Scrobble) {
        let week = LastFMWeekCalendar.week(containing: s.instant).from
        if !s.album.isEmpty { add(Key(week: week, kind: .album, artist: s.artist, name: s.album), s.instant, s.albumMBID) }
        add(Key(week: week, kind: .artist, artist: s.artist, name: ""), s.instant, s.artistMBID)
    }

    private mutating func add(_ key: Key, _ instant: Int64, _ mbid: String?) {
        entries[key, default: Plays()].add(instant: instant, mbid: mbid)
    }

    public static func kindCode(_ kind: ChartKind) -> Int64 {
        switch kind {
        case .album: 0
        case .artist: 1
        case .track: 2
        }
    }

    // MARK: - SQLite

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("weekly rollups v1") { db in
            try db.execute(sql: """
                CREATE TABLE weekly_play (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    week INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    artist TEXT NOT NULL,
                    name TEXT NOT NULL,
                    plays INTEGER NOT NULL,
                    mbid TEXT,
                    mbid_instant INTEGER NOT NULL,
                    PRIMARY KEY (user_id, week, kind, artist, name)
                ) WITHOUT ROWID
                """)
        }
        // Archives that counted their rollups under v1 (which did) get their
        // album rows' keys; the others are counted here.
        migrator.registerMigration("weekly rollups v2: album keys") { db in
            // Track rows are no longer kept (`kinds`).
            try db.execute(sql: "DELETE FROM weekly_play WHERE kind = 2")
            try db.execute(sql: "ALTER TABLE weekly_play ADD COLUMN album_key TEXT")
            let rows = try Row.fetchAll(db, sql: "SELECT user_id, week, artist, name FROM weekly_play WHERE kind = 0")
            let update = try db.makeStatement(sql: "UPDATE weekly_play SET album_key = ? WHERE user_id = ? AND week = ? AND kind = 0 AND artist = ? AND name = ?")
            for row in rows {
                let artist: String = row[2], name: String = row[3]
                let key = Key(week: row[1], kind: .album, artist: artist, name: name).albumKey
                try update.execute(arguments: [key, row[0], row[1], artist, name])
            }
            try db.execute(sql: "CREATE INDEX weekly_play_album ON weekly_play(user_id, album_key, week) WHERE album_key IS NOT NULL")
            if try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM weekly_play)")! { try buildAll(in: db) }
        }
    }

    /// Counts every archived scrobble into rollups (the migration, for
    /// archives stored before rollups existed): one pass in key order,
    /// written every 50,000 keys so memory stays bounded.
    static func buildAll(in db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble ORDER BY user_id, instant
            """)
        var rollup = WeeklyRollup()
        var user: Int64?
        while let row = try rows.next() {
            let id: Int64 = row[0]
            if id != user || rollup.entries.count >= 50_000 {
                if let user { try rollup.add(to: user, in: db) }
                rollup = WeeklyRollup()
                user = id
            }
            rollup.add(Scrobble(instant: row[1], artist: row[2], album: row[4], track: row[3],
                                artistMBID: row[5], albumMBID: row[6], trackMBID: row[7]))
        }
        if let user { try rollup.add(to: user, in: db) }
    }

    /// Adds these plays to `userID`'s stored rollups: upserts of
    /// `rowsPerStatement` keys per statement, bound through the SQLite C
    /// API (as scrobbles are inserted), since an import of a million
    /// scrobbles upserts about as many keys.
    func add(to userID: Int64, in db: Database) throws {
        guard !entries.isEmpty else { return }
        var rest = entries[...]
        while !rest.isEmpty {
            let size = rest.count >= Self.rowsPerStatement ? Self.rowsPerStatement : 1
            let statement = try db.cachedStatement(sql: Self.upsertSQL(rows: size, userID: userID))
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            var index: Int32 = 1
            var end = rest.startIndex
            for _ in 0..<size {
                let (key, plays) = rest[end]
                sqlite3_bind_int64(handle, index, key.week)
                sqlite3_bind_int64(handle, index + 1, Self.kindCode(key.kind))
                SQLiteScrobbleStore.bind(key.artist, index + 2, handle)
                SQLiteScrobbleStore.bind(key.name, index + 3, handle)
                sqlite3_bind_int64(handle, index + 4, Int64(plays.count))
                SQLiteScrobbleStore.bind(plays.mbid, index + 5, handle)
                sqlite3_bind_int64(handle, index + 6, plays.mbidInstant)
                SQLiteScrobbleStore.bind(key.albumKey, index + 7, handle)
                index += 8
                end = rest.index(after: end)
            }
            rest = rest[end...]
            let code = sqlite3_step(handle)
            guard code == SQLITE_DONE else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
            }
            sqlite3_reset(handle)
        }
    }

    static let rowsPerStatement = 32

    static func upsertSQL(rows: Int, userID: Int64) -> String {
        "INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant, album_key) VALUES "
            + Array(repeating: "(\(userID), ?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            + """
             ON CONFLICT (user_id, week, kind, artist, name) DO UPDATE SET
                plays = plays + excluded.plays,
                mbid = CASE WHEN excluded.mbid_instant < mbid_instant THEN excluded.mbid ELSE mbid END,
                mbid_instant = min(mbid_instant, excluded.mbid_instant)
            """
    }

    /// Counts `weeks` of `userID` again from the scrobbles.
    static func rebuild(weeks: Set<Int64>, of userID: Int64, in db: Database) throws {
        for week in weeks.sorted() {
            try db.execute(sql: "DELETE FROM weekly_play WHERE user_id = ? AND week = ?", arguments: [userID, week])
            let rows = try Row.fetchCursor(db, sql: """
                SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble
                WHERE user_id = ? AND instant >= ? AND instant < ?
                """, arguments: [userID, week, week + LastFMWeekCalendar.weekLength])
            var rollup = WeeklyRollup()
            while let row = try rows.next() {
                rollup.add(Scrobble(instant: row[0], artist: row[1], album: row[3], track: row[2],
                                    artistMBID: row[4], albumMBID: row[5], trackMBID: row[6]))
            }
            try rollup.add(to: userID, in: db)
        }
    }

    /// The weeks one album was played in, from the album index.
    static func albumWeeks(userID: Int64, artist: String, album: String, in db: Database) throws -> [WeekPlays] {
        guard let key = ScrobbleTally.key(.album, artist: artist, album: album, track: "") else { return [] }
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT week, sum(plays) FROM weekly_play WHERE user_id = ? AND album_key = ? AND kind = 0 GROUP BY week ORDER BY week
            """), arguments: [userID, key])
        var weeks: [WeekPlays] = []
        while let row = try rows.next() {
            weeks.append(WeekPlays(week: LastFMWeekCalendar.week(containing: row[0]), plays: row[1]))
        }
        return weeks
    }

    /// Whether every one of `weeks` is a whole Last.fm week, so its chart
    /// can be read from rollups.
    static func coversWholeWeeks(_ kind: ChartKind, _ weeks: [ChartWeek]) -> Bool { WeeklyRollupCharts.canRead(kind, weeks) }

    /// The charts of `weeks` (whole Last.fm weeks) read from rollups: one
    /// seek per week into the rollup table's key.
    static func charts(_ kind: ChartKind, user: Username, userID: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        var charts = WeeklyRollupCharts(kind: kind, weeks: weeks)
        let starts = charts.weekStarts
        guard !starts.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: starts.count).joined(separator: ", ")
        let statement = try db.cachedStatement(sql: """
            SELECT week, artist, name, plays, mbid, mbid_instant FROM weekly_play
            WHERE user_id = ? AND kind = ? AND week IN (\(marks))
            """)
        var arguments: StatementArguments = [userID, kindCode(kind)]
        for week in starts { arguments += [week] }
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            charts.add(week: row[0], artist: row[1], name: row[2], plays: row[3], mbid: row[4], mbidInstant: row[5])
        }
        return charts.charts(of: user)
    }
}

/// Charts assembled from weekly rollup rows (plays per week and exact
/// spelling), as both stores keep them: rows of the weeks asked for are
/// merged case-insensitively by `SpellingCounts`, and a week asked for
/// twice gets the same chart twice.
public struct WeeklyRollupCharts: Sendable {
    public let weeks: [ChartWeek]
    private var position: [Int64: Int] = [:]
    private var counts: SpellingCounts

    /// Whether rollups hold charts of `kind` for `weeks`: a kind they are
    /// kept for (`WeeklyRollup.kinds`), and whole Last.fm weeks, the only
    /// spans they count.
    public static func canRead(_ kind: ChartKind, _ weeks: [ChartWeek]) -> Bool {
        WeeklyRollup.kinds.contains(kind) && weeks.allSatisfy { LastFMWeekCalendar.week(containing: $0.from) == $0 }
    }

    /// The code rollup rows store for `kind`.
    public static func code(_ kind: ChartKind) -> Int16 { Int16(WeeklyRollup.kindCode(kind)) }

    /// The `mbid_instant` of a rollup row none of whose plays has an id.
    public static let noIDInstant = Int64.max

    public init(kind: ChartKind, weeks: [ChartWeek]) {
        self.weeks = weeks
        counts = SpellingCounts(kind: kind, weeks: weeks.count)
        for (n, week) in weeks.enumerated() where position[week.from] == nil { position[week.from] = n }
    }

    /// The distinct starts of the weeks asked for: the rollup rows to read.
    public var weekStarts: [Int64] { Array(position.keys) }

    /// One rollup row.
    public mutating func add(week: Int64, artist: String, name: String, plays: Int, mbid: String?, mbidInstant: Int64) {
        guard let n = position[week] else { return }
        counts.addGroup(week: n, artist: artist, name: name, plays: plays, mbid: mbid,
                        mbidInstant: mbidInstant == Self.noIDInstant ? nil : mbidInstant)
    }

    public func charts(of user: Username) -> [WeeklyChart] {
        var charts = counts.charts(of: user, weeks: weeks)
        for (n, week) in weeks.enumerated() where position[week.from] != n { charts[n] = charts[position[week.from]!] }
        return charts
    }
}

extension WeeklyRollup.Plays {
    public mutating func add(instant: Int64, mbid: String?) {
        count += 1
        if let mbid, instant < mbidInstant {
            self.mbid = mbid
            mbidInstant = instant
        }
    }
}
