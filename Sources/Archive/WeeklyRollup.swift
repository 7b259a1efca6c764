import Foundation
import GRDB
import GRDBSQLite
import VinylogueCore

/// The ranked album and artist charts of every Last.fm week a person
/// played in, kept in the archive beside the scrobbles (`weekly_chart`,
/// in both stores): a whole week's chart is a read of its rows in rank
/// order, "this week in every year" a read of the top rows of a few weeks,
/// and an album's whole life one range of an index that carries its rank
/// and plays in each week.
///
/// A week's rows are counted by `ScrobbleTally` from all of that week's
/// scrobbles, in the archive's order (`canonicalOrder`), so they are
/// exactly the chart a count of the stored rows gives. Every write counts
/// again the weeks it inserted rows into, in its own transaction: from the
/// rows it inserted when they are all the week holds (a first import),
/// else from the week's stored scrobbles. A write that inserts nothing
/// (a re-import) touches nothing.
///
/// Track charts are counted from the scrobbles: a week rarely repeats a
/// track, so their rows would be nearly a row per scrobble, and read no
/// faster than the week's scrobbles.
public enum WeeklyRollup {
    /// One row: the entry at one rank of one week's chart of one kind.
    public struct ChartRow: Sendable, Hashable {
        public let week: Int64
        public let kind: ChartKind
        public let entry: ChartEntry

        public init(week: Int64, kind: ChartKind, entry: ChartEntry) {
            self.week = week
            self.kind = kind
            self.entry = entry
        }

        /// The album's case-insensitive key (`ScrobbleTally.key`), for
        /// album rows: what the album index is ordered by.
        public var albumKey: String? { kind == .album ? ScrobbleTally.key(.album, artist: entry.artist, album: entry.name, track: "") : nil }
    }

    /// The kinds whose charts are kept.
    public static let kinds: [ChartKind] = [.album, .artist]

    /// The rows of one week's charts, counted from all of its `scrobbles`
    /// (in any order: they are put in `canonicalOrder` first).
    public static func rows(week: Int64, scrobbles: [Scrobble]) -> [ChartRow] {
        let ordered = scrobbles.sorted(by: canonicalOrder)
        var rows: [ChartRow] = []
        for kind in kinds {
            var tally = ScrobbleTally.Tally(kind: kind)
            for s in ordered { tally.add(s) }
            rows += tally.ranked().map { ChartRow(week: week, kind: kind, entry: $0) }
        }
        return rows
    }

    /// A week's kept `entries` of `kind` (in rank order) with `added`
    /// counted in, when that is exactly what counting the whole week again
    /// gives; nil when only a whole count can say. Each added scrobble must
    /// start a new group or be spelled as its group is shown (the shown
    /// spelling is the one played most, so one more play keeps it; ties go
    /// by spelling, not by order); another spelling of a known group could
    /// overtake the shown one, which only a whole count knows.
    ///
    /// Order matters only for a group's MusicBrainz id, the first one seen
    /// in `canonicalOrder`. `afterAll` says every added scrobble comes after
    /// all the week's others: then a kept id stays. Otherwise an added id
    /// can be counted in only where the group kept none (none of its
    /// scrobbles had one) or the same one.
    ///
    /// What makes a listen received one at a time (or an import into weeks
    /// that hold listens already) cost a read of the week's chart rows
    /// rather than of all its scrobbles.
    public static func adding(_ added: [Scrobble], to entries: [ChartEntry], kind: ChartKind, afterAll: Bool = true) -> [ChartEntry]? {
        struct Group {
            var entry: ChartEntry
            let foldedArtist: String
            let foldedName: String
            /// The id the kept rows gave it (nil for a new group).
            var keptMBID: String? = nil
        }
        func folded(_ artist: String, _ name: String) -> (artist: String, name: String, key: String) {
            let foldedArtist = artist.lowercased()
            let foldedName = kind == .artist ? foldedArtist : name.lowercased()
            return (foldedArtist, foldedName, kind == .artist ? foldedArtist : foldedArtist + "\u{1F}" + foldedName)
        }
        var groups: [Group] = []
        var index: [String: Int] = [:]
        groups.reserveCapacity(entries.count + added.count)
        for entry in entries {
            let f = folded(entry.artist, entry.name)
            index[f.key] = groups.count
            groups.append(Group(entry: entry, foldedArtist: f.artist, foldedName: f.name, keptMBID: entry.mbid))
        }
        for scrobble in added.sorted(by: canonicalOrder) {
            let name: String
            let mbid: String?
            switch kind {
            case .album:
                if scrobble.album.isEmpty { continue }
                (name, mbid) = (scrobble.album, scrobble.albumMBID)
            case .artist: (name, mbid) = (scrobble.artist, scrobble.artistMBID)
            case .track: return nil
            }
            let f = folded(scrobble.artist, name)
            if let n = index[f.key] {
                let shown = groups[n].entry
                guard shown.artist == scrobble.artist, shown.name == name else { return nil }
                if !afterAll, let kept = groups[n].keptMBID, let mbid, !mbid.isEmpty, mbid != kept { return nil }
                let keptID = shown.mbid ?? (mbid?.isEmpty == false ? mbid : nil)
                groups[n].entry = ChartEntry(rank: shown.rank, artist: shown.artist, name: shown.name, plays: shown.plays + 1, mbid: keptID)
            } else {
                index[f.key] = groups.count
                groups.append(Group(entry: ChartEntry(rank: 0, artist: scrobble.artist, name: name, plays: 1, mbid: mbid?.isEmpty == false ? mbid : nil),
                                    foldedArtist: f.artist, foldedName: f.name))
            }
        }
        // Most plays first; ties by folded artist, then folded name (as `ScrobbleTally.Tally.ranked`).
        groups.sort { x, y in
            if x.entry.plays != y.entry.plays { return x.entry.plays > y.entry.plays }
            if x.foldedArtist != y.foldedArtist { return x.foldedArtist < y.foldedArtist }
            return x.foldedName < y.foldedName
        }
        return groups.enumerated().map { rank, group in
            ChartEntry(rank: rank + 1, artist: group.entry.artist, name: group.entry.name, plays: group.entry.plays, mbid: group.entry.mbid)
        }
    }

    /// The order a week's scrobbles are counted in (which decides whose
    /// MusicBrainz id a group shows): by time, then artist and track as
    /// bytes, as SQLite's primary key orders them.
    public static func canonicalOrder(_ a: Scrobble, _ b: Scrobble) -> Bool {
        if a.instant != b.instant { return a.instant < b.instant }
        if a.artist != b.artist { return a.artist.utf8.lexicographicallyPrecedes(b.artist.utf8) }
        return a.track.utf8.lexicographicallyPrecedes(b.track.utf8)
    }

    /// The code rows store for `kind`.
    public static func code(_ kind: ChartKind) -> Int16 {
        switch kind {
        case .album: 0
        case .artist: 1
        case .track: 2
        }
    }

    /// Whether the kept charts hold `kind` for `weeks`: a kept kind, and
    /// whole Last.fm weeks, the only spans they count.
    public static func canRead(_ kind: ChartKind, _ weeks: [ChartWeek]) -> Bool {
        kinds.contains(kind) && weeks.allSatisfy { LastFMWeekCalendar.week(containing: $0.from) == $0 }
    }

    /// The end of the Last.fm week starting at `week` (saturating: a
    /// damaged row's time may sit at either end of `Int64`).
    public static func end(of week: Int64) -> Int64 { week.plus(LastFMWeekCalendar.weekLength) }
}

/// The weeks one write inserted scrobbles into, and which rows it knows it
/// inserted there: what `WeeklyRollup` counts again afterwards.
public struct TouchedWeeks: Sendable {
    /// The rows known to be inserted, per week start.
    public private(set) var inserted: [Int64: [Scrobble]] = [:]
    /// Weeks some of whose given rows may or may not have been inserted
    /// (an ignored exact duplicate hides which).
    public private(set) var uncertain: Set<Int64> = []

    public init() {}

    public var isEmpty: Bool { inserted.isEmpty && uncertain.isEmpty }

    /// Every touched week, oldest first.
    public var weeks: [Int64] { Set(inserted.keys).union(uncertain).sorted() }

    public mutating func add(inserted s: Scrobble) {
        inserted[LastFMWeekCalendar.week(containing: s.instant).from, default: []].append(s)
    }

    public mutating func add(perhapsInserted s: Scrobble) {
        uncertain.insert(LastFMWeekCalendar.week(containing: s.instant).from)
    }

    /// The rows this write surely inserted into `week`, when it knows them
    /// all (nil when an ignored exact duplicate hides some).
    public func latest(_ week: Int64) -> [Scrobble]? {
        guard !uncertain.contains(week) else { return nil }
        return inserted[week]
    }

    /// The week's rows when the write's own rows are all it holds
    /// (`storedCount` rows are stored in it now), else nil: read them back.
    public func wholeWeek(_ week: Int64, storedCount: Int) -> [Scrobble]? {
        guard !uncertain.contains(week), let rows = inserted[week], rows.count == storedCount else { return nil }
        return rows
    }
}

/// Charts assembled from kept chart rows read in rank order: each week
/// asked for gets its rows (a week asked for twice gets them twice; one
/// with no rows, an empty chart).
public struct KeptCharts: Sendable {
    public let kind: ChartKind
    public let weeks: [ChartWeek]
    private var entries: [Int64: [ChartEntry]] = [:]

    public init(kind: ChartKind, weeks: [ChartWeek]) {
        self.kind = kind
        self.weeks = weeks
    }

    /// The distinct starts of the weeks asked for: the rows to read.
    public var weekStarts: [Int64] { Array(Set(weeks.map(\.from))).sorted() }

    /// One row (a week's rows in any order: `WeeklyChart` ranks them).
    public mutating func add(week: Int64, rank: Int, artist: String, name: String, plays: Int, mbid: String?) {
        entries[week, default: []].append(ChartEntry(rank: rank, artist: artist, name: name, plays: plays, mbid: mbid))
    }

    public func charts(of user: Username) -> [WeeklyChart] {
        weeks.map { WeeklyChart(user: user, kind: kind, week: $0, entries: entries[$0.from] ?? []) }
    }
}

// MARK: - SQLite

extension WeeklyRollup {
    static func registerMigrations(in migrator: inout DatabaseMigrator, progress: MigrationProgress?) {
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
        migrator.registerMigration("weekly rollups v2: album keys") { _ in
            // Its work (album keys on the rows of v1) is thrown away by v3,
            // which drops the table; archives that ran it keep its name.
        }
        // Plays per spelling became ranked charts per week.
        migrator.registerMigration("weekly charts v3") { db in
            try db.execute(sql: "DROP TABLE weekly_play")
            try db.execute(sql: """
                CREATE TABLE weekly_chart (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    week INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    rank INTEGER NOT NULL,
                    artist TEXT NOT NULL,
                    name TEXT NOT NULL,
                    plays INTEGER NOT NULL,
                    mbid TEXT,
                    album_key TEXT,
                    PRIMARY KEY (user_id, week, kind, rank)
                ) WITHOUT ROWID
                """)
            try db.execute(sql: "CREATE INDEX weekly_chart_album ON weekly_chart(user_id, album_key, week) WHERE album_key IS NOT NULL")
            try countEverything(in: db, progress: progress)
        }
    }

    /// Counts the charts of every week of every archived person from the
    /// scrobbles (the migration): one pass in key order, a week at a time.
    static func countEverything(in db: Database, progress: MigrationProgress?) throws {
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM scrobble") ?? 0
        var counter = progress.map { MigrationCounter(name: "Counting the weekly charts", total: total, report: $0) }
        counter?.advance(to: 0)
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble ORDER BY user_id, instant
            """)
        var current: (user: Int64, week: Int64)?
        var scrobbles: [Scrobble] = []
        var done = 0
        func flush() throws {
            if let current { try replace(week: current.week, of: current.user, with: rows(week: current.week, scrobbles: scrobbles), in: db) }
            done += scrobbles.count
            counter?.advance(to: done)
            scrobbles.removeAll(keepingCapacity: true)
        }
        while let row = try cursor.next() {
            let user: Int64 = row[0], instant: Int64 = row[1]
            let week = LastFMWeekCalendar.week(containing: instant).from
            if current?.user != user || current?.week != week {
                try flush()
                current = (user, week)
            }
            scrobbles.append(Scrobble(instant: instant, artist: row[2], album: row[4], track: row[3],
                                      artistMBID: row[5], albumMBID: row[6], trackMBID: row[7]))
        }
        try flush()
        counter?.advance(to: total)
    }

    /// Counts again each week `touched` (one write, inside its transaction).
    static func recount(_ touched: TouchedWeeks, userID: Int64, in db: Database) throws {
        let counting = try db.cachedStatement(sql: "SELECT count(*) FROM scrobble WHERE user_id = ? AND instant >= ? AND instant < ?")
        for week in touched.weeks {
            let end = end(of: week)
            let stored = try Int.fetchOne(counting, arguments: [userID, week, end]) ?? 0
            if let whole = touched.wholeWeek(week, storedCount: stored) {
                try replace(week: week, of: userID, with: rows(week: week, scrobbles: whole), in: db)
                continue
            }
            // Listens after all the week held (a player's, as they come):
            // counted into the kept rows, when that is exact.
            // An import into weeks that hold listens already, too.
            if let added = touched.latest(week), let first = added.map(\.instant).min(),
               try addToKept(added, week: week, userID: userID,
                             afterAll: try Int.fetchOne(counting, arguments: [userID, first, end]) == added.count, in: db) {
                continue
            }
            let scrobbles = try storedScrobbles(of: userID, from: week, to: end, in: db)
            try replace(week: week, of: userID, with: rows(week: week, scrobbles: scrobbles), in: db)
        }
    }

    /// Counts `added` into `week`'s kept rows (`adding(_:to:kind:)`),
    /// rewriting only the ranks whose rows change; false (nothing written)
    /// when a kind needs a whole count.
    static func addToKept(_ added: [Scrobble], week: Int64, userID: Int64, afterAll: Bool, in db: Database) throws -> Bool {
        var changes: [(kind: ChartKind, old: [ChartEntry], new: [ChartEntry])] = []
        for kind in kinds {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT rank, artist, name, plays, mbid FROM weekly_chart WHERE user_id = ? AND week = ? AND kind = ? ORDER BY rank
                """), arguments: [userID, week, code(kind)])
            var old: [ChartEntry] = []
            while let row = try rows.next() {
                old.append(ChartEntry(rank: row[0], artist: row[1], name: row[2], plays: row[3], mbid: row[4]))
            }
            guard let new = adding(added, to: old, kind: kind, afterAll: afterAll) else { return false }
            changes.append((kind, old, new))
        }
        for (kind, old, new) in changes {
            let changed = new.indices.filter { $0 >= old.count || old[$0] != new[$0] }
            guard !changed.isEmpty else { continue }
            let deleting = try db.cachedStatement(sql: "DELETE FROM weekly_chart WHERE user_id = ? AND week = ? AND kind = ? AND rank = ?")
            for i in changed where i < old.count { try deleting.execute(arguments: [userID, week, code(kind), i + 1]) }
            let rows = changed.map { ChartRow(week: week, kind: kind, entry: new[$0]) }
            try insert(rows, userID: userID, in: db)
        }
        return true
    }

    /// The stored scrobbles of `userID` in [from, to), through the C API.
    static func storedScrobbles(of userID: Int64, from: Int64, to: Int64, in db: Database) throws -> [Scrobble] {
        let statement = try db.cachedStatement(sql: """
            SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble
            WHERE user_id = ? AND instant >= ? AND instant < ?
            """)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        sqlite3_bind_int64(handle, 1, userID)
        sqlite3_bind_int64(handle, 2, from)
        sqlite3_bind_int64(handle, 3, to)
        var found: [Scrobble] = []
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            found.append(Scrobble(instant: sqlite3_column_int64(handle, 0), artist: SQLiteColumns.text(handle, 1),
                                  album: SQLiteColumns.text(handle, 3), track: SQLiteColumns.text(handle, 2),
                                  artistMBID: SQLiteColumns.optionalText(handle, 4), albumMBID: SQLiteColumns.optionalText(handle, 5),
                                  trackMBID: SQLiteColumns.optionalText(handle, 6)))
            code = sqlite3_step(handle)
        }
        try SQLiteColumns.check(code, db)
        return found
    }

    /// Replaces the stored rows of `userID`'s `week` with `rows`, bound
    /// through the C API, `rowsPerStatement` rows per statement.
    static func replace(week: Int64, of userID: Int64, with rows: [ChartRow], in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM weekly_chart WHERE user_id = ? AND week = ?").execute(arguments: [userID, week])
        try insert(rows, userID: userID, in: db)
    }

    /// Inserts `rows`, bound through the C API, `rowsPerStatement` rows per statement.
    static func insert(_ rows: [ChartRow], userID: Int64, in db: Database) throws {
        var rest = rows[...]
        while !rest.isEmpty {
            let size = rest.count >= rowsPerStatement ? rowsPerStatement : 1
            let statement = try db.cachedStatement(sql: insertSQL(rows: size))
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, userID)
            var index: Int32 = 2
            for row in rest.prefix(size) {
                sqlite3_bind_int64(handle, index, row.week)
                sqlite3_bind_int64(handle, index + 1, Int64(code(row.kind)))
                sqlite3_bind_int64(handle, index + 2, Int64(row.entry.rank))
                SQLiteScrobbleStore.bind(row.entry.artist, index + 3, handle)
                SQLiteScrobbleStore.bind(row.entry.name, index + 4, handle)
                sqlite3_bind_int64(handle, index + 5, Int64(row.entry.plays))
                SQLiteScrobbleStore.bind(row.entry.mbid, index + 6, handle)
                SQLiteScrobbleStore.bind(row.albumKey, index + 7, handle)
                index += 8
            }
            rest = rest.dropFirst(size)
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            try SQLiteColumns.check(code, db)
        }
    }

    static let rowsPerStatement = 32

    /// The insert of `rows` rows: the user id is parameter 1 in every row
    /// (bound once), each row's values are the next 8; one SQL for every user.
    static func insertSQL(rows: Int) -> String {
        "INSERT INTO weekly_chart (user_id, week, kind, rank, artist, name, plays, mbid, album_key) VALUES "
            + Array(repeating: "(?1, ?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// Every week `userID` played one album, with its plays and rank, from
    /// the album index (named: without statistics, SQLite would rather
    /// walk the primary key in week order).
    static func albumWeeks(userID: Int64, artist: String, album: String, in db: Database) throws -> [AlbumWeek] {
        guard let key = ScrobbleTally.key(.album, artist: artist, album: album, track: "") else { return [] }
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT week, plays, rank, artist, name FROM weekly_chart INDEXED BY weekly_chart_album
            WHERE user_id = ? AND album_key = ? ORDER BY week
            """), arguments: [userID, key])
        var weeks: [AlbumWeek] = []
        while let row = try rows.next() {
            weeks.append(AlbumWeek(week: LastFMWeekCalendar.week(containing: row[0]), plays: row[1], rank: row[2], artist: row[3], name: row[4]))
        }
        return weeks
    }

    /// The keys of the albums `userID` played in weeks from `from` on.
    static func albumsPlayed(userID: Int64, since from: Int64, in db: Database) throws -> Set<String> {
        let statement = try db.cachedStatement(sql: """
            SELECT DISTINCT album_key FROM weekly_chart WHERE user_id = ? AND week >= ? AND kind = 0
            """)
        return try Set(String.fetchCursor(statement, arguments: [userID, from]))
    }

    /// The charts of `weeks` (whole Last.fm weeks) read from the kept rows:
    /// one seek per week, rows in rank order, through the C API.
    static func charts(_ kind: ChartKind, user: Username, userID: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        var charts = KeptCharts(kind: kind, weeks: weeks)
        let starts = charts.weekStarts
        guard !starts.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: starts.count).joined(separator: ", ")
        let statement = try db.cachedStatement(sql: """
            SELECT week, rank, artist, name, plays, mbid FROM weekly_chart
            WHERE user_id = ? AND kind = ? AND week IN (\(marks)) ORDER BY week, rank
            """)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        sqlite3_bind_int64(handle, 1, userID)
        sqlite3_bind_int64(handle, 2, Int64(code(kind)))
        for (n, week) in starts.enumerated() { sqlite3_bind_int64(handle, Int32(n + 3), week) }
        var result = sqlite3_step(handle)
        while result == SQLITE_ROW {
            charts.add(week: sqlite3_column_int64(handle, 0), rank: Int(sqlite3_column_int64(handle, 1)),
                       artist: SQLiteColumns.text(handle, 2), name: SQLiteColumns.text(handle, 3),
                       plays: Int(sqlite3_column_int64(handle, 4)), mbid: SQLiteColumns.optionalText(handle, 5))
            result = sqlite3_step(handle)
        }
        try SQLiteColumns.check(result, db)
        return charts.charts(of: user)
    }
}

/// Reading columns and results through SQLite's C API, for the archive's
/// hot paths (GRDB's rows would allocate per row).
enum SQLiteColumns {
    static func text(_ handle: OpaquePointer?, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    static func optionalText(_ handle: OpaquePointer?, _ column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : text(handle, column)
    }

    /// Throws unless `code` ended a statement well (`SQLITE_DONE`).
    static func check(_ code: Int32, _ db: Database) throws {
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
