import Foundation
import Stores
import GRDB
import GRDBSQLite
import VinylogueCore

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
            // Counted by v4 ("editions folded"), which counts every week
            // again: an archive older than both is counted once.
        }
    }

    /// How `userID`'s plays group (`AlbumChoices`): their switch (else the
    /// rule) and their choices about single albums.
    static func folding(userID: Int64, in db: Database) throws -> AlbumFolding {
        guard let nameKey = try String.fetchOne(db.cachedStatement(sql: "SELECT name_key FROM archive_user WHERE id = ?"),
                                                arguments: [userID]) else { return .editions }
        return try SQLiteScrobbleStore.folding(nameKey: nameKey, in: db)
    }

    /// Editions of an album became one album (`AlbumIdentity`): every
    /// week's charts are counted again, keys and all.
    static func registerFoldedMigration(in migrator: inout DatabaseMigrator, progress: MigrationProgress?) {
        // Each person's choice of how their albums group (`AlbumChoices`),
        // before the charts are counted with it.
        migrator.registerMigration("album folding choices") { db in
            try db.execute(sql: """
                CREATE TABLE album_folding (
                    name_key TEXT PRIMARY KEY,
                    folds_editions INTEGER NOT NULL,
                    version INTEGER NOT NULL
                ) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("weekly charts v4: editions folded") { db in
            try db.execute(sql: "DELETE FROM weekly_chart")
            try countEverything(in: db, progress: progress)
        }
    }

    /// Counts the charts of every week of every archived person from the
    /// scrobbles (the migration): one pass in key order, a week at a time.
    /// It runs before listens kept album artists, so it reads none.
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
        var folding = (user: Int64.min, names: ScrobbleTally.FoldedNames(.editions))
        func flush() throws {
            if let current {
                if folding.user != current.user {
                    // Only the switch: this runs in the migration before
                    // choices about single albums existed.
                    let folds = try Bool.fetchOne(db, sql: """
                        SELECT f.folds_editions FROM album_folding f JOIN archive_user u ON u.name_key = f.name_key WHERE u.id = ?
                        """, arguments: [current.user]) ?? true
                    folding = (current.user, ScrobbleTally.FoldedNames(AlbumFolding(foldsEditions: folds)))
                }
                try replace(week: current.week, of: current.user, with: rows(week: current.week, scrobbles: scrobbles, names: &folding.names), in: db)
            }
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
        // The write's ties first: its weeks count in their groups.
        try SQLiteScrobbleStore.tie(touched, userID: userID, in: db)
        var planning = RollupPlanning(touched: touched, folding: try folding(userID: userID, in: db))
        while let question = planning.question {
            switch question {
            case .counts(let ranges):
                let counting = try db.cachedStatement(sql: "SELECT count(*) FROM scrobble WHERE user_id = ? AND instant >= ? AND instant < ?")
                planning.answer(counts: try ranges.map { try Int.fetchOne(counting, arguments: [userID, $0.lowerBound, $0.upperBound]) ?? 0 })
            case .keptRows(let weeks):
                var kept: [Int64: [ChartKind: [ChartEntry]]] = [:]
                for week in weeks { kept[week] = try keptRows(of: userID, week: week, in: db) }
                planning.answer(kept: kept)
            case .scrobbles(let weeks):
                var scrobbles: [Int64: [Scrobble]] = [:]
                for week in weeks { scrobbles[week] = try storedScrobbles(of: userID, from: week, to: end(of: week), in: db) }
                planning.answer(scrobbles: scrobbles)
            }
        }
        for change in planning.plan.changes {
            switch change {
            case .replace(let week, let rows):
                try replace(week: week, of: userID, with: rows, in: db)
            case .adjust(let week, let rows, let changed):
                // Only the ranks whose rows differ are rewritten.
                let deleting = try db.cachedStatement(sql: "DELETE FROM weekly_chart WHERE user_id = ? AND week = ? AND kind = ? AND rank = ?")
                var rewritten: [ChartRow] = []
                for kind in kinds {
                    let ofKind = rows.filter { $0.kind == kind }
                    for i in changed[kind] ?? [] {
                        try deleting.execute(arguments: [userID, week, code(kind), i + 1])
                        rewritten.append(ofKind[i])
                    }
                }
                if !rewritten.isEmpty { try insert(rewritten, userID: userID, in: db) }
            }
        }
    }

    /// `userID`'s kept album and artist rows of `week`, by kind, rank order.
    static func keptRows(of userID: Int64, week: Int64, in db: Database) throws -> [ChartKind: [ChartEntry]] {
        var kept: [ChartKind: [ChartEntry]] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT kind, rank, artist, name, plays, mbid FROM weekly_chart WHERE user_id = ? AND week = ? ORDER BY kind, rank
            """), arguments: [userID, week])
        while let row = try rows.next() {
            guard let kind = kinds.first(where: { code($0) == row[0] as Int16 }) else { continue }
            kept[kind, default: []].append(ChartEntry(rank: row[1], artist: row[2], name: row[3], plays: row[4], mbid: row[5]))
        }
        return kept
    }

    /// The stored scrobbles of `userID` in [from, to), through the C API.
    static func storedScrobbles(of userID: Int64, from: Int64, to: Int64, in db: Database) throws -> [Scrobble] {
        let statement = try db.cachedStatement(sql: """
            SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid FROM scrobble
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
                                  trackMBID: SQLiteColumns.optionalText(handle, 6), albumArtist: SQLiteColumns.optionalText(handle, 7),
                                  releaseGroupMBID: SQLiteColumns.optionalText(handle, 8)))
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
        guard let key = ScrobbleTally.key(.album, artist: artist, album: album, track: "", folding: try folding(userID: userID, in: db)) else {
            return []
        }
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
