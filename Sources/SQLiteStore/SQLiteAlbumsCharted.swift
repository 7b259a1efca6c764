import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func albumsCharted(of user: Username, in weeks: [ChartWeek]) async throws(SourceError) -> [ChartedAlbum]? {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Self.albumsCharted(userID: id, in: weeks, in: db)
        }
    }

    /// The album rows of `weeks`, each with its album's first and last
    /// week: a seek per week, and two into the album index per row.
    static func albumsCharted(userID: Int64, in weeks: [ChartWeek], in db: Database) throws -> [ChartedAlbum] {
        let statement = try db.cachedStatement(sql: """
            SELECT c.artist, c.name, c.plays, c.mbid, c.album_key,
                (SELECT min(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key),
                (SELECT max(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key)
            FROM weekly_chart c WHERE c.user_id = ? AND c.week = ? AND c.kind = 0 AND c.album_key IS NOT NULL
            """)
        var found: [ChartedAlbum] = []
        for week in Set(weeks).sorted() {
            let rows = try Row.fetchCursor(statement, arguments: [userID, week.from])
            while let row = try rows.next() {
                found.append(ChartedAlbum(week: week, artist: row[0], name: row[1], plays: row[2], mbid: row[3], key: row[4],
                                          firstWeek: LastFMWeekCalendar.week(containing: row[5]), lastWeek: LastFMWeekCalendar.week(containing: row[6])))
            }
        }
        return found
    }
}
