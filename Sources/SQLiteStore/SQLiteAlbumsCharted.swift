import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func albumsCharted(of user: Username, in weeks: [ChartWeek], lifeOf: Set<ChartWeek>) async throws(SourceError) -> [ChartedAlbum]? {
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Self.albumsCharted(userID: id, in: weeks, lifeOf: lifeOf, in: db)
        }
    }

    /// The album rows of `weeks`: a seek per week; those of `lifeOf` with
    /// their album's first and last week, two seeks into the album index each.
    static func albumsCharted(userID: Int64, in weeks: [ChartWeek], lifeOf: Set<ChartWeek>, in db: Database) throws -> [ChartedAlbum] {
        let withLife = try db.cachedStatement(sql: """
            SELECT c.artist, c.name, c.plays, c.mbid, c.album_key,
                (SELECT min(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key),
                (SELECT max(f.week) FROM weekly_chart f INDEXED BY weekly_chart_album WHERE f.user_id = c.user_id AND f.album_key = c.album_key)
            FROM weekly_chart c WHERE c.user_id = ? AND c.week = ? AND c.kind = 0 AND c.album_key IS NOT NULL
            """)
        let plain = try db.cachedStatement(sql: """
            SELECT artist, name, plays, mbid, album_key FROM weekly_chart WHERE user_id = ? AND week = ? AND kind = 0 AND album_key IS NOT NULL
            """)
        var found: [ChartedAlbum] = []
        for week in Set(weeks).union(lifeOf).sorted() {
            let life = lifeOf.contains(week)
            let rows = try Row.fetchCursor(life ? withLife : plain, arguments: [userID, week.from])
            while let row = try rows.next() {
                found.append(ChartedAlbum(week: week, artist: row[0], name: row[1], plays: row[2], mbid: row[3], key: row[4],
                                          firstWeek: life ? LastFMWeekCalendar.week(containing: row[5]) : nil,
                                          lastWeek: life ? LastFMWeekCalendar.week(containing: row[6]) : nil))
            }
        }
        return found
    }
}
