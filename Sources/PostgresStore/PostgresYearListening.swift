import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

extension PostgresScrobbleStore {
    public func yearListening(of user: Username, in year: ListeningYear) async throws(SourceError) -> YearListening? {
        let logger = self.logger
        return try await mapped {
            // Several statements that must agree: one snapshot.
            try await database.client.withTransaction(logger: logger) { connection in
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
                guard let id = try await Self.userID(of: user, connection, logger) else { return nil }
                return try await Self.yearListening(userID: id, year: year, connection, logger)
            }
        }
    }

    /// `year`'s counts (`YearListening`), by PostgreSQL: the same questions
    /// as SQLite's (`SQLiteYearListening.swift`).
    static func yearListening(userID: Int64, year: ListeningYear, _ connection: PostgresConnection,
                              _ logger: Logger) async throws -> YearListening {
        let folding = try await foldings(of: [userID], connection, logger)[userID] ?? .editions
        let later = Array(year.monthStarts.dropFirst())
        var rows: [YearListening.Row] = []
        for try await (month, artist, albumArtist, album, track, plays, mbid) in try await connection.query("""
            SELECT (SELECT count(*) FROM unnest(\(later)::bigint[]) AS m(at) WHERE s.instant >= m.at)::int AS month,
                s.artist, s.album_artist, s.album, s.track, count(*), max(s.album_mbid)
            FROM scrobble s WHERE s.user_id = \(userID) AND s.instant >= \(year.start) AND s.instant < \(year.end)
            GROUP BY 1, s.artist, s.album_artist, s.album, s.track
            """, logger: logger).decode((Int32, String, String?, String, String, Int64, String?).self) {
            rows.append(YearListening.Row(month: Int(month), artist: artist, albumArtist: albumArtist, album: album, track: track,
                                          plays: Int(plays), albumMBID: mbid))
        }
        var quarterHours: [Int64: Int] = [:]
        for try await (index, plays) in try await connection.query("""
            SELECT (instant - \(year.start)) / \(YearListening.bucket), count(*) FROM scrobble
            WHERE user_id = \(userID) AND instant >= \(year.start) AND instant < \(year.end) GROUP BY 1
            """, logger: logger).decode((Int64, Int64).self) {
            quarterHours[year.start + index * YearListening.bucket] = Int(plays)
        }
        var spans: [String: YearListening.AlbumSpan] = [:]
        let keys = YearListening.albumKeys(of: rows, folding: folding).sorted()
        if !keys.isEmpty {
            for try await (key, first, last, weeks) in try await connection.query("""
                SELECT album_key, min(week), max(week), count(*) FROM weekly_chart
                WHERE user_id = \(userID) AND album_key = ANY(\(keys)::text[]) GROUP BY album_key
                """, logger: logger).decode((String, Int64, Int64, Int64).self) {
                spans[key] = YearListening.AlbumSpan(first: LastFMWeekCalendar.week(containing: first),
                                                     last: LastFMWeekCalendar.week(containing: last), weeks: Int(weeks))
            }
        }
        var before = Set<String>()
        if year.firstWeek.from < year.start {
            var names = ScrobbleTally.FoldedNames(folding)
            for try await (artist, album) in try await connection.query("""
                SELECT DISTINCT coalesce(album_artist, artist), album FROM scrobble
                WHERE user_id = \(userID) AND instant >= \(year.firstWeek.from) AND instant < \(year.start) AND album <> ''
                """, logger: logger).decode((String, String).self) {
                before.insert(names.folded(.album, artist: artist, name: album).key)
            }
        }
        var previous = 0
        if let earlier = year.previous, let end = year.previousEnd {
            for try await count in try await connection.query("""
                SELECT count(*) FROM scrobble WHERE user_id = \(userID) AND instant >= \(earlier.start) AND instant < \(end)
                """, logger: logger).decode(Int64.self) {
                previous = Int(count)
            }
        }
        return YearListening(rows: rows, quarterHours: quarterHours, albumSpans: spans, playedJustBefore: before, previousPlays: previous,
                             folding: folding)
    }
}
