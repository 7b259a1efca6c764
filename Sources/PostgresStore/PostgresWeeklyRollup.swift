import Archive
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// Weekly rollups in PostgreSQL: plays per (user, Last.fm week, kind,
/// exact spelling) in `weekly_play`, as SQLite keeps them, so a whole
/// week's chart is a read of a few dozen rows instead of a count over the
/// week's scrobbles.
///
/// Every write counts again, in the same transaction and under the same
/// per-user lock, the weeks it inserted rows into — in SQL, from the
/// scrobbles themselves, so rollups cannot drift from the rows whatever
/// the write was (checked, unchecked, partly ignored). A write that adds
/// nothing touches nothing.
extension PostgresScrobbleStore {
    /// Counts `weeks` of `userID` again from its scrobbles: their rollup
    /// rows are replaced by one grouping per kind over one range of the
    /// scrobbles' key per week (fenced, as `archivedNear` explains).
    static func recount(_ weeks: Set<ChartWeek>, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !weeks.isEmpty else { return }
        let sorted = weeks.sorted { $0.from < $1.from }
        let starts = sorted.map(\.from), ends = sorted.map(\.to)
        try await connection.query("DELETE FROM weekly_play WHERE user_id = \(userID) AND week = ANY(\(starts))", logger: logger)
        var query = PostgresQuery(unsafeSQL: """
            INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant)
            WITH touched AS MATERIALIZED (
                SELECT $1::bigint AS user_id, w.f AS week, s.* FROM unnest($2::bigint[], $3::bigint[]) AS w(f, t)
                CROSS JOIN LATERAL (SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble
                                    WHERE user_id = $1 AND instant >= w.f AND instant < w.t OFFSET 0) AS s)
            \(groupings(from: "touched"))
            """)
        query.binds.append(userID)
        query.binds.append(starts)
        query.binds.append(ends)
        try await connection.query(query, logger: logger)
    }

    /// The three groupings (album, artist, track) of the scrobbles in
    /// `table` (which has `user_id` and `week` columns) into rollup rows. A group's id
    /// is that of its earliest play that has one, ties broken by the
    /// scrobbles' key in byte order, as SQLite reads them.
    static func groupings(from table: String) -> String {
        func grouping(_ code: Int16, name: String, mbid: String, filter: String) -> String {
            """
            SELECT user_id, week, \(code)::smallint, artist, \(name), count(*)::int,
                (array_agg(\(mbid) ORDER BY instant, artist COLLATE "C", track COLLATE "C") FILTER (WHERE \(mbid) IS NOT NULL))[1],
                coalesce(min(instant) FILTER (WHERE \(mbid) IS NOT NULL), \(WeeklyRollupCharts.noIDInstant))
            FROM \(table) \(filter) GROUP BY user_id, week, artist\(name == "''" ? "" : ", " + name)
            """
        }
        return [
            grouping(WeeklyRollupCharts.code(.album), name: "album", mbid: "album_mbid", filter: "WHERE album <> ''"),
            grouping(WeeklyRollupCharts.code(.artist), name: "''", mbid: "artist_mbid", filter: ""),
            grouping(WeeklyRollupCharts.code(.track), name: "track", mbid: "track_mbid", filter: ""),
        ].joined(separator: "\nUNION ALL\n")
    }

    /// The Last.fm weeks `scrobbles` fall in.
    static func weeks(of scrobbles: some Sequence<Scrobble>) -> Set<ChartWeek> {
        var weeks = Set<ChartWeek>()
        var last: ChartWeek?
        for s in scrobbles {
            if let last, s.instant >= last.from, s.instant < last.to { continue }
            let week = LastFMWeekCalendar.week(containing: s.instant)
            weeks.insert(week)
            last = week
        }
        return weeks
    }

    /// The charts of `weeks` (whole Last.fm weeks) from rollups: one
    /// query, one seek into the rollup key per week.
    static func rollupCharts(_ kind: ChartKind, of user: Username, userID: Int64, weeks: [ChartWeek],
                             _ connection: PostgresConnection, _ logger: Logger) async throws -> [WeeklyChart] {
        var charts = WeeklyRollupCharts(kind: kind, weeks: weeks)
        let rows = try await connection.query("""
            SELECT week, artist, name, plays, mbid, mbid_instant FROM weekly_play
            WHERE user_id = \(userID) AND kind = \(WeeklyRollupCharts.code(kind)) AND week = ANY(\(charts.weekStarts))
            """, logger: logger)
        for try await (week, artist, name, plays, mbid, mbidInstant) in rows.decode((Int64, String, String, Int32, String?, Int64).self) {
            charts.add(week: week, artist: artist, name: name, plays: Int(plays), mbid: mbid, mbidInstant: mbidInstant)
        }
        return charts.charts(of: user)
    }

    /// The migration that builds rollups for every archived scrobble, for
    /// databases archived before rollups existed. The week of an instant
    /// is Last.fm's (`LastFMWeekCalendar`): Sundays 12:00 UTC, counted in
    /// `numeric` at the far ends of `bigint`, where a damaged row's instant
    /// may sit.
    static let rollupMigration: [String] = [
        """
        CREATE TABLE weekly_play (
            user_id BIGINT NOT NULL,
            week BIGINT NOT NULL,
            kind SMALLINT NOT NULL,
            artist TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            plays INT NOT NULL,
            mbid TEXT,
            mbid_instant BIGINT NOT NULL,
            PRIMARY KEY (user_id, week, kind, artist, name))
        """,
        """
        INSERT INTO weekly_play (user_id, week, kind, artist, name, plays, mbid, mbid_instant)
        WITH archived AS MATERIALIZED (
            SELECT CASE WHEN instant >= -4611686018427387904
                        THEN instant - (((instant - \(anchor)) % \(LastFMWeekCalendar.weekLength)) + \(LastFMWeekCalendar.weekLength)) % \(LastFMWeekCalendar.weekLength)
                        ELSE greatest(-9223372036854775808::numeric,
                                      instant::numeric - mod(mod(instant::numeric - \(anchor), \(LastFMWeekCalendar.weekLength)) + \(LastFMWeekCalendar.weekLength), \(LastFMWeekCalendar.weekLength)))::bigint
                   END AS week, user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid
            FROM scrobble)
        \(groupings(from: "archived"))
        """,
    ]

    /// A week boundary (`LastFMWeekCalendar`): Sunday 4 January 1970, 12:00 UTC.
    static var anchor: Int64 { LastFMWeekCalendar.week(containing: 0).to }
}
