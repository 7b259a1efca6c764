import Archive
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// Weekly rollups in PostgreSQL: plays per (user, Last.fm week, kind,
/// exact spelling) in `weekly_play`, as SQLite keeps them, so a whole
/// week's chart is a read of a few dozen rows instead of a count over the
/// week's scrobbles, and an album's life is one range of an index.
///
/// They are counted in Swift by `WeeklyRollup`, as SQLite's are (one
/// definition of a rollup, and Swift's case folding for the album key),
/// from exactly the rows each write inserted, in the same transaction and
/// under the same per-user lock. A write that adds nothing touches nothing.
extension PostgresScrobbleStore {
    /// Adds `rollup` to `userID`'s rollups. Weeks with no rollup rows yet
    /// (all of them, for a first import) are copied straight into the
    /// table; the others are merged through a temporary table.
    static func add(_ rollup: WeeklyRollup, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !rollup.isEmpty else { return }
        let weeks = Array(Set(rollup.entries.keys.lazy.map(\.week)))
        let rows = try await connection.query("""
            SELECT w FROM unnest(\(weeks)::bigint[]) AS w
            WHERE EXISTS (SELECT 1 FROM weekly_play WHERE user_id = \(userID) AND week = w)
            """, logger: logger)
        var stored = Set<Int64>()
        for try await week in rows.decode(Int64.self) { stored.insert(week) }
        let entries = rollup.entries
        let (fresh, merged) = split(entries, stored: stored)
        try await copyRollup(fresh, userID: userID, into: "weekly_play", connection, logger)
        guard !stored.isEmpty else { return }
        try await connection.query("""
            CREATE TEMPORARY TABLE IF NOT EXISTS weekly_play_incoming (LIKE weekly_play) ON COMMIT DELETE ROWS
            """, logger: logger)
        try await copyRollup(merged, userID: userID, into: "weekly_play_incoming", connection, logger)
        try await connection.query("""
            INSERT INTO weekly_play AS w SELECT * FROM weekly_play_incoming
            ON CONFLICT (user_id, week, kind, artist, name) DO UPDATE SET
                plays = w.plays + excluded.plays,
                mbid = CASE WHEN excluded.mbid_instant < w.mbid_instant THEN excluded.mbid ELSE w.mbid END,
                mbid_instant = least(w.mbid_instant, excluded.mbid_instant)
            """, logger: logger)
    }

    typealias RollupRow = (WeeklyRollup.Key, WeeklyRollup.Plays)

    /// The rows of weeks with nothing stored yet, and the others.
    static func split(_ entries: [WeeklyRollup.Key: WeeklyRollup.Plays], stored: Set<Int64>) -> (fresh: [RollupRow], merged: [RollupRow]) {
        var fresh: [RollupRow] = [], merged: [RollupRow] = []
        fresh.reserveCapacity(entries.count)
        for (key, plays) in entries {
            if stored.contains(key.week) { merged.append((key, plays)) } else { fresh.append((key, plays)) }
        }
        return (fresh, merged)
    }

    /// Streams rollup rows into `table` with `COPY` (text format).
    static func copyRollup(_ rows: [RollupRow], userID: Int64, into table: String,
                           _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await CopyText.stream(rows, into: table, columns: ["user_id", "week", "kind", "artist", "name", "plays", "mbid",
                                                            "mbid_instant", "album_key"], connection, logger) { row, buffer in
            let (key, plays) = row
            buffer.writeString("\(userID)\t\(key.week)\t\(WeeklyRollupCharts.code(key.kind))\t")
            CopyText.write(key.artist, to: &buffer)
            CopyText.write(key.name, to: &buffer)
            buffer.writeString("\(plays.count)\t")
            CopyText.write(plays.mbid, to: &buffer)
            buffer.writeString("\(plays.mbidInstant)\t")
            CopyText.write(key.albumKey, to: &buffer)
            // The last column ends the line, not a tab.
            buffer.moveWriterIndex(to: buffer.writerIndex - 1)
        }
    }

    /// The charts of `weeks` (whole Last.fm weeks) from rollups: one
    /// query, one seek into the rollup key per week.
    static func rollupCharts(_ kind: ChartKind, of user: Username, userID: Int64, weeks: [ChartWeek],
                             _ connection: PostgresConnection, _ logger: Logger) async throws -> [WeeklyChart] {
        var charts = WeeklyRollupCharts(kind: kind, weeks: weeks)
        // One seek into the primary key per week, fenced (`OFFSET 0`): until
        // autovacuum has analysed a table an import just filled, the planner
        // may take the album index instead and read every album row of the
        // person (a 1,000,000-scrobble import's charts took 4.8 ms so).
        let rows = try await connection.query("""
            SELECT w.week, p.artist, p.name, p.plays, p.mbid, p.mbid_instant FROM unnest(\(charts.weekStarts)::bigint[]) AS w(week)
            CROSS JOIN LATERAL (SELECT artist, name, plays, mbid, mbid_instant FROM weekly_play
                                WHERE user_id = \(userID) AND week = w.week AND kind = \(WeeklyRollupCharts.code(kind)) OFFSET 0) AS p
            """, logger: logger)
        for try await (week, artist, name, plays, mbid, mbidInstant) in rows.decode((Int64, String, String, Int32, String?, Int64).self) {
            charts.add(week: week, artist: artist, name: name, plays: Int(plays), mbid: mbid, mbidInstant: mbidInstant)
        }
        return charts.charts(of: user)
    }

    /// Every week `userID` played one album, from the album index.
    static func albumWeeks(userID: Int64, key: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> [WeekPlays] {
        let rows = try await connection.query("""
            SELECT week, sum(plays)::bigint FROM weekly_play WHERE user_id = \(userID) AND album_key = \(key) AND kind = 0
            GROUP BY week ORDER BY week
            """, logger: logger)
        var weeks: [WeekPlays] = []
        for try await (week, plays) in rows.decode((Int64, Int64).self) {
            weeks.append(WeekPlays(week: LastFMWeekCalendar.week(containing: week), plays: Int(plays)))
        }
        return weeks
    }

    /// The rollup table (`album_key` only on album rows, which the album
    /// index covers).
    static let rollupTable: [String] = [
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
            album_key TEXT COLLATE "C",
            PRIMARY KEY (user_id, week, kind, artist, name))
        """,
        "CREATE INDEX weekly_play_album ON weekly_play(user_id, album_key, week) WHERE album_key IS NOT NULL",
    ]

    /// The migration's work (`countEverything`).
    static let buildRollups: PostgresDatabase.Migration.Work = { connection, logger in try await countEverything(connection, logger) }

    /// Counts every archived scrobble into rollups, person by person in
    /// time order, written every 50,000 keys (the migration, for archives
    /// stored before rollups existed).
    static func countEverything(_ connection: PostgresConnection, _ logger: Logger) async throws {
        var users: [Int64] = []
        for try await id in try await connection.query("SELECT id FROM archive_user ORDER BY id", logger: logger).decode(Int64.self) {
            users.append(id)
        }
        for id in users {
            // Read in slices of the key, so the connection is free to write between them.
            var after: (Int64, String, String)?
            while true {
                var rollup = WeeklyRollup()
                var last: (Int64, String, String)?
                var read = 0
                var query = PostgresQuery(unsafeSQL: """
                    SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid FROM scrobble WHERE user_id = $1
                    """)
                query.binds.append(id)
                if let after {
                    query.sql += " AND (instant, artist, track) > ($2, $3, $4)"
                    query.binds.append(after.0)
                    query.binds.append(after.1)
                    query.binds.append(after.2)
                }
                query.sql += " ORDER BY instant, artist, track LIMIT 50000"
                let rows = try await connection.query(query, logger: logger)
                for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID)
                    in rows.decode((Int64, String, String, String, String?, String?, String?).self) {
                    rollup.add(Scrobble(instant: instant, artist: artist, album: album, track: track,
                                        artistMBID: artistMBID, albumMBID: albumMBID, trackMBID: trackMBID))
                    last = (instant, artist, track)
                    read += 1
                }
                try await add(rollup, userID: id, connection, logger)
                guard read == 50_000, let last else { break }
                after = last
            }
        }
    }
}
