import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

extension PostgresScrobbleStore {
    public func albumsCharted(of user: Username, lifeOf: Set<ChartWeek>, around: [[ChartWeek]],
                              inAtLeast: Int) async throws(SourceError) -> [ChartedAlbum]? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            return try await Self.albumsCharted(userID: id, lifeOf: lifeOf, around: around, inAtLeast: inAtLeast, connection, logger)
        }
    }

    /// The same questions as SQLite's (`SQLiteAlbumsCharted.swift`): the
    /// life weeks' rows with their first and last weeks, then the albums
    /// of `inAtLeast` years of `around`, counted by PostgreSQL, and their rows there.
    static func albumsCharted(userID: Int64, lifeOf: Set<ChartWeek>, around: [[ChartWeek]], inAtLeast: Int, _ connection: PostgresConnection,
                              _ logger: Logger) async throws -> [ChartedAlbum] {
        var found: [ChartedAlbum] = []
        var seen = Set<[String]>()
        let lives = lifeOf.map(\.from).sorted()
        if !lives.isEmpty {
            for try await (week, artist, name, plays, mbid, key, first, last) in try await connection.query("""
                SELECT c.week, c.artist, c.name, c.plays, c.mbid, c.album_key,
                    (SELECT min(f.week) FROM weekly_chart f WHERE f.user_id = c.user_id AND f.album_key = c.album_key),
                    (SELECT max(f.week) FROM weekly_chart f WHERE f.user_id = c.user_id AND f.album_key = c.album_key)
                FROM weekly_chart c WHERE c.user_id = \(userID) AND c.week = ANY(\(lives)::bigint[]) AND c.kind = 0 AND c.album_key IS NOT NULL
                ORDER BY c.week, c.rank
                """, logger: logger).decode((Int64, String, String, Int64, String?, String, Int64, Int64).self) {
                seen.insert([String(week), key])
                found.append(ChartedAlbum(week: LastFMWeekCalendar.week(containing: week), artist: artist, name: name, plays: Int(plays), mbid: mbid,
                                          key: key, firstWeek: LastFMWeekCalendar.week(containing: first),
                                          lastWeek: LastFMWeekCalendar.week(containing: last)))
            }
        }
        let pairs = around.enumerated().flatMap { year, weeks in weeks.map { ($0.from, Int32(year)) } }
        guard !pairs.isEmpty, inAtLeast <= around.count else { return found }
        let weeks = pairs.map(\.0), years = pairs.map(\.1)
        var counted: [(key: String, years: Int, latest: Int64)] = []
        for try await (key, count, latest) in try await connection.query("""
            WITH w(week, year) AS (SELECT * FROM unnest(\(weeks)::bigint[], \(years)::int[]))
            SELECT c.album_key, count(DISTINCT w.year), max(c.week) FROM w JOIN weekly_chart c ON c.week = w.week
            WHERE c.user_id = \(userID) AND c.kind = 0 AND c.album_key IS NOT NULL
            GROUP BY c.album_key HAVING count(DISTINCT w.year) >= \(inAtLeast)
            """, logger: logger).decode((String, Int64, Int64).self) {
            counted.append((key, Int(count), latest))
        }
        let keys = Anniversaries.ritualCandidates(counted)
        guard !keys.isEmpty else { return found }
        for try await (week, artist, name, plays, mbid, key) in try await connection.query("""
            SELECT week, artist, name, plays, mbid, album_key FROM weekly_chart
            WHERE user_id = \(userID) AND album_key = ANY(\(keys)::text[]) AND week = ANY(\(weeks)::bigint[]) AND kind = 0
            ORDER BY week, rank
            """, logger: logger).decode((Int64, String, String, Int64, String?, String).self) {
            guard seen.insert([String(week), key]).inserted else { continue }
            found.append(ChartedAlbum(week: LastFMWeekCalendar.week(containing: week), artist: artist, name: name, plays: Int(plays), mbid: mbid,
                                      key: key, firstWeek: nil, lastWeek: nil))
        }
        return found
    }
}
