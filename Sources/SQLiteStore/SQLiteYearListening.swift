import Foundation
import GRDB
import Stores
import VinylogueCore

extension SQLiteScrobbleStore {
    public func yearListening(of user: Username, in year: ListeningYear) async throws(SourceError) -> YearListening? {
        // Several statements that must agree: one snapshot.
        try await readAsync { db in
            guard let id = try Self.userID(of: user, in: db) else { return nil }
            return try Self.yearListening(userID: id, year: year, in: db)
        }
    }

    /// `year`'s counts (`YearListening`), by SQLite: plays per spelling and
    /// month in one pass over the year's range of the primary key, plays
    /// per quarter hour, and the album index's first and last week of
    /// each of the year's albums.
    static func yearListening(userID: Int64, year: ListeningYear, in db: Database) throws -> YearListening {
        let folding = try WeeklyRollup.folding(userID: userID, in: db)
        // The month: how many of the later months' starts it is past.
        let month = year.monthStarts.dropFirst().map { _ in "(instant >= ?)" }.joined(separator: " + ")
        var arguments = StatementArguments(year.monthStarts.dropFirst())
        arguments += [userID, year.start, year.end]
        let counted = try Row.fetchCursor(db, sql: """
            SELECT \(month) AS month, artist, album_artist, album, track, count(*), max(album_mbid) FROM scrobble
            WHERE user_id = ? AND instant >= ? AND instant < ?
            GROUP BY month, artist, album_artist, album, track
            """, arguments: arguments)
        var rows: [YearListening.Row] = []
        while let row = try counted.next() {
            rows.append(YearListening.Row(month: row[0], artist: row[1], albumArtist: row[2], album: row[3], track: row[4], plays: row[5],
                                          albumMBID: row[6]))
        }
        var quarterHours: [Int64: Int] = [:]
        let quarters = try Row.fetchCursor(db, sql: """
            SELECT (instant - ?) / \(YearListening.bucket), count(*) FROM scrobble WHERE user_id = ? AND instant >= ? AND instant < ? GROUP BY 1
            """, arguments: [year.start, userID, year.start, year.end])
        while let row = try quarters.next() {
            let index: Int64 = row[0]
            quarterHours[year.start + index * YearListening.bucket] = row[1]
        }
        var spans: [String: YearListening.AlbumSpan] = [:]
        let keys = Array(YearListening.albumKeys(of: rows, folding: folding))
        for chunk in stride(from: 0, to: keys.count, by: 500).map({ keys[$0..<min($0 + 500, keys.count)] }) {
            let marks = chunk.map { _ in "?" }.joined(separator: ", ")
            let found = try Row.fetchCursor(db, sql: """
                SELECT album_key, min(week), max(week), count(*) FROM weekly_chart INDEXED BY weekly_chart_album
                WHERE user_id = ? AND album_key IN (\(marks)) GROUP BY album_key
                """, arguments: StatementArguments([userID] + Array(chunk)))
            while let row = try found.next() {
                spans[row[0]] = YearListening.AlbumSpan(first: LastFMWeekCalendar.week(containing: row[1]),
                                                        last: LastFMWeekCalendar.week(containing: row[2]), weeks: row[3])
            }
        }
        var before = Set<String>()
        if year.firstWeek.from < year.start {
            var names = ScrobbleTally.FoldedNames(folding)
            let played = try Row.fetchCursor(db, sql: """
                SELECT DISTINCT coalesce(album_artist, artist), album FROM scrobble
                WHERE user_id = ? AND instant >= ? AND instant < ? AND album <> ''
                """, arguments: [userID, year.firstWeek.from, year.start])
            while let row = try played.next() { before.insert(names.folded(.album, artist: row[0], name: row[1]).key) }
        }
        var previous: Int?
        if let earlier = year.previous, let end = year.previousEnd {
            previous = try Int.fetchOne(db, sql: "SELECT count(*) FROM scrobble WHERE user_id = ? AND instant >= ? AND instant < ?",
                                        arguments: [userID, earlier.start, end])
        }
        return YearListening(rows: rows, quarterHours: quarterHours, albumSpans: spans, playedJustBefore: before, previousPlays: previous ?? 0,
                             folding: folding)
    }
}
