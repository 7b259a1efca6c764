import Foundation
import Stores
import GRDB
import GRDBSQLite
import VinylogueCore

/// Chart reads: the kept weekly rollups for whole weeks, else a count of
/// the week's scrobbles.
extension SQLiteScrobbleStore {
    /// SQLite's read behind every chart question: nil when `user` has no
    /// archive, else the charts of `weeks`, from the weekly rollups when
    /// they are whole Last.fm weeks (always, for the archive's own week
    /// list), else counted from the scrobbles.
    static func chartReading(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) -> @Sendable (Database) throws -> [WeeklyChart]? {
        { db in
            guard let id = try SQLiteScrobbleStore.userID(of: user, in: db) else { return nil }
            return try charts(kind, user: user, userID: id, weeks: weeks, in: db)
        }
    }

    /// The charts of `kind` for `weeks`: from the weekly rollups when
    /// they are whole Last.fm weeks, else counted from the scrobbles.
    static func charts(_ kind: ChartKind, user: Username, userID id: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        if WeeklyRollup.canRead(kind, weeks) { return try WeeklyRollup.charts(kind, user: user, userID: id, weeks: weeks, in: db) }
        return try counted(kind, user: user, userID: id, weeks: weeks, in: db)
    }

    /// The charts of `kind` for several weeks in one SQLite query.
    ///
    /// SQLite only walks the primary key's (user, instant) ranges, with no
    /// sorting; the rows are counted per exact spelling in Swift (a
    /// dictionary of a few hundred keys) and merged by `SpellingCounts`.
    static func counted(_ kind: ChartKind, user: Username, userID: Int64, weeks: [ChartWeek], in db: Database) throws -> [WeeklyChart] {
        guard !weeks.isEmpty else { return [] }
        // An album counts for its album artist where the listen named one.
        let (artist, name, mbid, albumFilter) = switch kind {
        case .album: ("coalesce(s.album_artist, s.artist)", "s.album", "s.album_mbid", "AND s.album <> ''")
        case .artist: ("s.artist", "''", "s.artist_mbid", "")
        case .track: ("s.artist", "s.track", "s.track_mbid", "")
        }
        let values = weeks.map { _ in "(?, ?, ?)" }.joined(separator: ", ")
        let statement = try db.cachedStatement(sql: """
            WITH w(n, f, t) AS (VALUES \(values))
            SELECT w.n, s.instant, \(artist), \(name), \(mbid)
            FROM w JOIN scrobble s ON s.user_id = ? AND s.instant >= w.f AND s.instant < w.t \(albumFilter)
            """)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (n, week) in weeks.enumerated() {
            sqlite3_bind_int64(handle, Int32(3 * n + 1), Int64(n))
            sqlite3_bind_int64(handle, Int32(3 * n + 2), week.from)
            sqlite3_bind_int64(handle, Int32(3 * n + 3), week.to)
        }
        sqlite3_bind_int64(handle, Int32(3 * weeks.count + 1), userID)
        defer { sqlite3_reset(handle) }

        var counts = SpellingCounts(kind: kind, weeks: weeks.count, folding: try WeeklyRollup.folding(userID: userID, in: db))
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            let hasMBID = sqlite3_column_type(handle, 4) != SQLITE_NULL
            counts.addPlay(week: Int(sqlite3_column_int64(handle, 0)), artist: SQLiteColumns.text(handle, 2), name: SQLiteColumns.text(handle, 3),
                           instant: sqlite3_column_int64(handle, 1), mbid: hasMBID ? { SQLiteColumns.text(handle, 4) } : nil)
            code = sqlite3_step(handle)
        }
        try SQLiteColumns.check(code, db)
        return counts.charts(of: user, weeks: weeks)
    }
}
