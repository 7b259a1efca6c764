import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func albumsCharted(of user: Username, lifeOf: Set<ChartWeek>, around: [[ChartWeek]],
                              inAtLeast: Int) async throws(SourceError) -> [ChartedAlbum]? {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Self.albumsCharted(userID: id, lifeOf: lifeOf, around: around, inAtLeast: inAtLeast, in: db)
        }
    }

    /// `lifeOf`'s album rows with their album's first and last week (a seek
    /// per week, two into the album index per row); then the albums that
    /// chart in `inAtLeast` of `around`'s years, counted by SQLite, and
    /// only their rows of those weeks.
    static func albumsCharted(userID: Int64, lifeOf: Set<ChartWeek>, around: [[ChartWeek]], inAtLeast: Int,
                              in db: Database) throws -> [ChartedAlbum] {
        let withLife = try db.cachedStatement(sql: """
            SELECT c.artist, c.name, c.plays, c.mbid, c.album_key,
                (SELECT min(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key),
                (SELECT max(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key)
            FROM weekly_chart c WHERE c.user_id = ? AND c.week = ? AND c.kind = 0 AND c.album_key IS NOT NULL
            """)
        var found: [ChartedAlbum] = []
        var seen = Set<[String]>()
        for week in lifeOf.sorted() {
            let rows = try Row.fetchCursor(withLife, arguments: [userID, week.from])
            while let row = try rows.next() {
                let album = ChartedAlbum(week: week, artist: row[0], name: row[1], plays: row[2], mbid: row[3], key: row[4],
                                         firstWeek: LastFMWeekCalendar.week(containing: row[5]), lastWeek: LastFMWeekCalendar.week(containing: row[6]))
                seen.insert([String(week.from), album.key])
                found.append(album)
            }
        }
        let pairs = around.enumerated().flatMap { year, weeks in weeks.map { ($0.from, year) } }
        guard !pairs.isEmpty, inAtLeast <= around.count else { return found }
        var arguments = StatementArguments()
        for (week, year) in pairs { arguments += [week, year] }
        arguments += [userID, inAtLeast]
        var counted: [(key: String, years: Int, latest: Int64)] = []
        // CROSS JOIN keeps the weeks the outer loop, each a seek of the
        // primary key: left to itself, SQLite scans the album index (30×).
        let grouped = try Row.fetchCursor(db, sql: """
            WITH w(week, year) AS (VALUES \(pairs.map { _ in "(?, ?)" }.joined(separator: ", ")))
            SELECT c.album_key, count(DISTINCT w.year), max(c.week) FROM w CROSS JOIN weekly_chart c ON c.week = w.week
            WHERE c.user_id = ? AND c.kind = 0 AND c.album_key IS NOT NULL
            GROUP BY c.album_key HAVING count(DISTINCT w.year) >= ?
            """, arguments: arguments)
        while let row = try grouped.next() { counted.append((row[0], row[1], row[2])) }
        let keys = Anniversaries.ritualCandidates(counted)
        guard !keys.isEmpty else { return found }
        let weeks = pairs.map(\.0)
        let rows = try Row.fetchCursor(db, sql: """
            SELECT week, artist, name, plays, mbid, album_key FROM weekly_chart INDEXED BY weekly_chart_album
            WHERE user_id = ? AND album_key IN (\(keys.map { _ in "?" }.joined(separator: ", "))) AND week IN (\(weeks.map { _ in "?" }.joined(separator: ", ")))
            """, arguments: StatementArguments([userID] + keys + weeks))
        while let row = try rows.next() {
            let week: Int64 = row[0], key: String = row[5]
            guard seen.insert([String(week), key]).inserted else { continue }
            found.append(ChartedAlbum(week: LastFMWeekCalendar.week(containing: week), artist: row[1], name: row[2], plays: row[3], mbid: row[4],
                                      key: key, firstWeek: nil, lastWeek: nil))
        }
        return found
    }
}
