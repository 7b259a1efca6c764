import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// The kept weekly charts in PostgreSQL (`weekly_chart`), as SQLite keeps
/// them (`WeeklyRollup`): a week's album and artist charts, ranked, so a
/// whole week's chart is a read of its rows and an album's life one range
/// of the album index, which carries each week's rank and plays.
///
/// They are counted in Swift by `WeeklyRollup`, as SQLite's are (one
/// definition, and Swift's case folding), in each write's transaction and
/// under the person's lock: the weeks a write inserted rows into are
/// counted again, from the rows it inserted when they are all the week
/// holds, else from the week's stored scrobbles.
extension PostgresScrobbleStore {
    /// How each of `userIDs`' plays group (`AlbumChoices`): their switch,
    /// their albums tied by release (`PostgresAlbumReleases.swift`) and
    /// their choices about single albums, for those who have any; one
    /// round trip.
    static func foldings(of userIDs: [Int64], _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64: AlbumFolding] {
        guard !userIDs.isEmpty else { return [:] }
        let rows = try await connection.query("""
            SELECT u.id, f.folds_editions, c.kind, c.key, c.target FROM archive_user u
            LEFT JOIN album_folding f ON f.name_key = u.name_key LEFT JOIN album_choice c ON c.name_key = u.name_key
            WHERE u.id = ANY(\(userIDs)::bigint[]) AND (f.name_key IS NOT NULL OR c.name_key IS NOT NULL)
            UNION ALL
            SELECT g.user_id, NULL, 'release', g.key, g.grouped_as FROM album_release_group g WHERE g.user_id = ANY(\(userIDs)::bigint[])
            """, logger: logger)
        var found: [Int64: (folds: Bool?, choices: [AlbumChoice], groups: [String: String])] = [:]
        for try await (id, folds, kind, key, target) in rows.decode((Int64, Bool?, String?, String?, String?).self) {
            // Changed where it is kept: a copy taken out and put back would
            // copy the person's groups at every row (seconds per write for
            // someone with thousands of tied spellings).
            if let folds { found[id, default: (nil, [], [:])].folds = folds }
            if kind == "release", let key, let target {
                found[id, default: (nil, [], [:])].groups[key] = target
            } else if let kind = kind.flatMap(AlbumChoice.Kind.init(rawValue:)), let key {
                found[id, default: (nil, [], [:])].choices.append(AlbumChoice(kind: kind, key: key, target: target, artist: "", album: "",
                                                                             targetArtist: nil, targetAlbum: nil, madeAt: .distantPast))
            } else if found[id] == nil {
                found[id] = (nil, [], [:])
            }
        }
        return found.mapValues { AlbumFolding(foldsEditions: $0.folds ?? true, choices: $0.choices, sameRelease: $0.groups) }
    }

    /// Counts again each week `touched`, replacing its rows.
    static func recount(_ touched: TouchedWeeks, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await recount([(userID, touched)], connection, logger)
    }

    /// Counts again each user's weeks `touched`, replacing their rows:
    /// `RollupPlanning` decides for each user, and each round of questions
    /// is one query for every user that asks it, whatever the number of
    /// weeks (a whole week's scrobbles, which few writes need, are read
    /// per user); the changed weeks of them all are then rewritten with one
    /// statement, or with COPY when they are many.
    static func recount(_ users: [(userID: Int64, touched: TouchedWeeks)], _ connection: PostgresConnection, _ logger: Logger) async throws {
        // The writes' ties first: their weeks count in their groups.
        for user in users where user.touched.removedListens || !user.touched.releases.isEmpty {
            try await tie(user.touched, userID: user.userID, connection, logger)
        }
        let foldings = try await self.foldings(of: users.map(\.userID), connection, logger)
        var plannings = users.map { RollupPlanning(touched: $0.touched, countsTogether: true, folding: foldings[$0.userID] ?? .editions) }
        while true {
            var counting: [(index: Int, ranges: [Range<Int64>])] = [], reading: [(index: Int, weeks: [Int64])] = []
            for (index, planning) in plannings.enumerated() {
                switch planning.question {
                case .counts(let ranges): counting.append((index, ranges))
                case .keptRows(let weeks): reading.append((index, weeks))
                case .scrobbles(let weeks):
                    plannings[index].answer(scrobbles: try await storedScrobbles(of: users[index].userID, weeks: weeks, connection, logger))
                case nil: break
                }
            }
            if counting.isEmpty, reading.isEmpty {
                guard plannings.contains(where: { $0.question != nil }) else { break }
                continue
            }
            if !counting.isEmpty {
                let counts = try await self.counts(counting.map { (users[$0.index].userID, $0.ranges) }, connection, logger)
                for (n, asked) in counting.enumerated() { plannings[asked.index].answer(counts: counts[n]) }
            }
            if !reading.isEmpty {
                let kept = try await keptRows(reading.map { (users[$0.index].userID, $0.weeks) }, connection, logger)
                for (n, asked) in reading.enumerated() { plannings[asked.index].answer(kept: kept[n]) }
            }
        }
        var replaced: [(userID: Int64, week: Int64)] = [], rows: [(userID: Int64, row: WeeklyRollup.ChartRow)] = []
        var many: [(userID: Int64, rows: [WeeklyRollup.ChartRow])] = []
        for (planning, user) in zip(plannings, users) {
            var new: [WeeklyRollup.ChartRow] = []
            for change in planning.plan.changes {
                switch change {
                case .replace(let week, let weekRows):
                    replaced.append((user.userID, week))
                    new += weekRows
                case .adjust(_, let weekRows, let ranks):
                    // Adjusted weeks only gain plays and groups: their
                    // changed ranks are written over.
                    for kind in WeeklyRollup.kinds {
                        let ofKind = weekRows.filter { $0.kind == kind }
                        new += (ranks[kind] ?? []).map { ofKind[$0] }
                    }
                }
            }
            if new.count > smallWrite { many.append((user.userID, new)) } else { rows += new.map { (user.userID, $0) } }
        }
        if !replaced.isEmpty {
            try await connection.query("""
                DELETE FROM weekly_chart c USING unnest(\(replaced.map(\.userID))::bigint[], \(replaced.map(\.week))::bigint[]) AS r(user_id, week)
                WHERE c.user_id = r.user_id AND c.week = r.week
                """, logger: logger)
        }
        try await upsertCharts(rows, connection, logger)
        for (userID, rows) in many {
            // What a replaced week had is gone; ranks past an adjusted
            // week's kept ones are new: both go in by COPY, and ranks kept
            // are written over by the statement.
            let isNew = Set(replaced.filter { $0.userID == userID }.map(\.week))
            try await copyCharts(rows.filter { isNew.contains($0.week) }, userID: userID, connection, logger)
            try await upsertCharts(rows.filter { !isNew.contains($0.week) }.map { (userID, $0) }, connection, logger)
        }
    }

    /// How many scrobbles each entry's user has stored in each of its
    /// ranges `[lowerBound, upperBound)`, in the order given: one query.
    static func counts(_ asked: [(userID: Int64, ranges: [Range<Int64>])], _ connection: PostgresConnection,
                       _ logger: Logger) async throws -> [[Int]] {
        var entries: [Int64] = [], users: [Int64] = [], froms: [Int64] = [], tos: [Int64] = []
        for (n, entry) in asked.enumerated() {
            for range in entry.ranges {
                entries.append(Int64(n)); users.append(entry.userID); froms.append(range.lowerBound); tos.append(range.upperBound)
            }
        }
        var counts = [[Int]](repeating: [], count: asked.count)
        guard !entries.isEmpty else { return counts }
        let rows = try await connection.query("""
            SELECT w.n, (SELECT count(*) FROM scrobble WHERE user_id = w.u AND instant >= w.f AND instant < w.t)
            FROM unnest(\(entries)::bigint[], \(users)::bigint[], \(froms)::bigint[], \(tos)::bigint[]) WITH ORDINALITY AS w(n, u, f, t, o)
            ORDER BY w.o
            """, logger: logger)
        for try await (n, count) in rows.decode((Int64, Int64).self) { counts[Int(n)].append(Int(count)) }
        return counts
    }

    /// The kept album and artist rows of each entry's user in each of its
    /// weeks, by kind, in rank order: one query.
    static func keptRows(_ asked: [(userID: Int64, weeks: [Int64])], _ connection: PostgresConnection,
                         _ logger: Logger) async throws -> [[Int64: [ChartKind: [ChartEntry]]]] {
        var entries: [Int64] = [], users: [Int64] = [], weeks: [Int64] = []
        for (n, entry) in asked.enumerated() {
            for week in entry.weeks { entries.append(Int64(n)); users.append(entry.userID); weeks.append(week) }
        }
        var kept = [[Int64: [ChartKind: [ChartEntry]]]](repeating: [:], count: asked.count)
        guard !entries.isEmpty else { return kept }
        let rows = try await connection.query("""
            SELECT w.n, c.week, c.kind, c.rank, c.artist, c.name, c.plays, c.mbid
            FROM unnest(\(entries)::bigint[], \(users)::bigint[], \(weeks)::bigint[]) AS w(n, u, week)
            CROSS JOIN LATERAL (SELECT week, kind, rank, artist, name, plays, mbid FROM weekly_chart
                                WHERE user_id = w.u AND week = w.week OFFSET 0) AS c
            ORDER BY w.n, c.week, c.kind, c.rank
            """, logger: logger)
        for try await (n, week, code, rank, artist, name, plays, mbid) in rows.decode((Int64, Int64, Int16, Int32, String, String, Int32, String?).self) {
            guard let kind = WeeklyRollup.kinds.first(where: { WeeklyRollup.code($0) == code }) else { continue }
            kept[Int(n)][week, default: [:]][kind, default: []].append(ChartEntry(rank: Int(rank), artist: artist, name: name, plays: Int(plays), mbid: mbid))
        }
        return kept
    }

    /// Writes `rows` (of any users) over the kept rows at the same ranks
    /// (adding those past the last), in one statement.
    static func upsertCharts(_ given: [(userID: Int64, row: WeeklyRollup.ChartRow)], _ connection: PostgresConnection,
                             _ logger: Logger) async throws {
        guard !given.isEmpty else { return }
        // NULs dropped, as COPY's text drops them.
        let rows = given.map(\.row).map { row in
            WeeklyRollup.ChartRow(row, entry: ChartEntry(rank: row.entry.rank, artist: CopyText.withoutNUL(row.entry.artist),
                                                         name: CopyText.withoutNUL(row.entry.name), plays: row.entry.plays,
                                                         mbid: CopyText.withoutNUL(row.entry.mbid)),
                                  albumKey: row.albumKey.map { CopyText.withoutNUL($0) })
        }
        try await connection.query("""
            INSERT INTO weekly_chart(user_id, week, kind, rank, artist, name, plays, mbid, album_key)
            SELECT r.user_id, r.week, r.kind, r.rank, r.artist, r.name, r.plays, CASE WHEN r.has_mbid THEN r.mbid END,
                CASE WHEN r.kind = 0 THEN r.album_key END
            FROM unnest(\(given.map(\.userID))::bigint[], \(rows.map(\.week))::bigint[], \(rows.map { WeeklyRollup.code($0.kind) })::smallint[],
                \(rows.map { Int32($0.entry.rank) })::int[],
                \(rows.map(\.entry.artist))::text[], \(rows.map(\.entry.name))::text[], \(rows.map { Int32($0.entry.plays) })::int[],
                \(rows.map { $0.entry.mbid ?? "" })::text[], \(rows.map { $0.entry.mbid != nil })::bool[], \(rows.map { $0.albumKey ?? "" })::text[])
                AS r(user_id, week, kind, rank, artist, name, plays, mbid, has_mbid, album_key)
            ON CONFLICT (user_id, week, kind, rank) DO UPDATE SET artist = excluded.artist, name = excluded.name, plays = excluded.plays,
                mbid = excluded.mbid, album_key = excluded.album_key
            """, logger: logger)
    }

    /// The stored scrobbles of `userID` in each of `weeks` (week starts),
    /// one query with one range of the primary key per week.
    static func storedScrobbles(of userID: Int64, weeks: [Int64], _ connection: PostgresConnection,
                                _ logger: Logger) async throws -> [Int64: [Scrobble]] {
        let rows = try await connection.query("""
            SELECT w.f, s.instant, s.artist, s.track, s.album, s.artist_mbid, s.album_mbid, s.track_mbid, s.album_artist, s.release_group_mbid
            FROM unnest(\(weeks)::bigint[], \(weeks.map(WeeklyRollup.end(of:)))::bigint[]) AS w(f, t)
            CROSS JOIN LATERAL (SELECT * FROM scrobble WHERE user_id = \(userID) AND instant >= w.f AND instant < w.t OFFSET 0) AS s
            """, logger: logger)
        var found: [Int64: [Scrobble]] = [:]
        for try await (week, instant, artist, track, album, artistMBID, albumMBID, trackMBID, albumArtist, groupMBID)
            in rows.decode((Int64, Int64, String, String, String, String?, String?, String?, String?, String?).self) {
            found[week, default: []].append(Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID,
                                                     albumMBID: albumMBID, trackMBID: trackMBID, albumArtist: albumArtist,
                                                     releaseGroupMBID: groupMBID))
        }
        return found
    }

    /// Streams chart rows into `weekly_chart` with `COPY` (text format).
    static func copyCharts(_ rows: some Sequence<WeeklyRollup.ChartRow>, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await CopyText.stream(rows, into: "weekly_chart", columns: ["user_id", "week", "kind", "rank", "artist", "name", "plays", "mbid",
                                                                     "album_key"], connection, logger) { row, buffer in
            buffer.writeString("\(userID)\t\(row.week)\t\(WeeklyRollup.code(row.kind))\t\(row.entry.rank)\t")
            CopyText.write(row.entry.artist, to: &buffer)
            CopyText.write(row.entry.name, to: &buffer)
            buffer.writeString("\(row.entry.plays)\t")
            CopyText.write(row.entry.mbid, to: &buffer)
            CopyText.write(row.albumKey, to: &buffer)
            // The last column ends the line, not a tab.
            buffer.moveWriterIndex(to: buffer.writerIndex - 1)
        }
    }

    /// The charts of `weeks` (whole Last.fm weeks) from the kept rows: one
    /// query, one seek into the primary key per week.
    static func keptCharts(_ kind: ChartKind, of user: Username, userID: Int64, weeks: [ChartWeek],
                           _ connection: PostgresConnection, _ logger: Logger) async throws -> [WeeklyChart] {
        var charts = KeptCharts(kind: kind, weeks: weeks)
        // One seek into the primary key per week, fenced (`OFFSET 0`): until
        // autovacuum has analysed a table an import just filled, the planner
        // may take the album index instead and read every album row of the
        // person.
        let rows = try await connection.query("""
            SELECT w.week, c.rank, c.artist, c.name, c.plays, c.mbid FROM unnest(\(charts.weekStarts)::bigint[]) AS w(week)
            CROSS JOIN LATERAL (SELECT rank, artist, name, plays, mbid FROM weekly_chart
                                WHERE user_id = \(userID) AND week = w.week AND kind = \(WeeklyRollup.code(kind)) OFFSET 0) AS c
            """, logger: logger)
        for try await (week, rank, artist, name, plays, mbid) in rows.decode((Int64, Int32, String, String, Int32, String?).self) {
            charts.add(week: week, rank: Int(rank), artist: artist, name: name, plays: Int(plays), mbid: mbid)
        }
        return charts.charts(of: user)
    }

    /// Every week `userID` played one album, with its plays and rank, from
    /// the album index.
    static func albumWeeks(userID: Int64, key: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> [AlbumWeek] {
        let rows = try await connection.query("""
            SELECT week, plays, rank, artist, name FROM weekly_chart WHERE user_id = \(userID) AND album_key = \(key) ORDER BY week
            """, logger: logger)
        var weeks: [AlbumWeek] = []
        for try await (week, plays, rank, artist, name) in rows.decode((Int64, Int32, Int32, String, String).self) {
            weeks.append(AlbumWeek(week: LastFMWeekCalendar.week(containing: week), plays: Int(plays), rank: Int(rank), artist: artist, name: name))
        }
        return weeks
    }

    /// The keys of the albums `userID` played in weeks from `from` on.
    static func albumsPlayed(userID: Int64, since from: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> Set<String> {
        let rows = try await connection.query("""
            SELECT DISTINCT album_key FROM weekly_chart WHERE user_id = \(userID) AND week >= \(from) AND kind = 0 AND album_key IS NOT NULL
            """, logger: logger)
        var keys = Set<String>()
        for try await key in rows.decode(String.self) { keys.insert(key) }
        return keys
    }

    /// The plays-per-spelling table of the first rollups, which
    /// `chartTable` replaced (kept so databases migrate in the same steps).
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

    /// Each person's choice of how their albums group (`AlbumChoices`).
    static let foldingTable: [String] = [
        """
        CREATE TABLE album_folding (
            name_key TEXT PRIMARY KEY,
            folds_editions BOOLEAN NOT NULL,
            version BIGINT NOT NULL)
        """,
    ]

    /// The kept charts' table; the album index carries rank and plays, so
    /// an album's life reads the index alone.
    static let chartTable: [String] = [
        "DROP TABLE weekly_play",
        """
        CREATE TABLE weekly_chart (
            user_id BIGINT NOT NULL,
            week BIGINT NOT NULL,
            kind SMALLINT NOT NULL,
            rank INT NOT NULL,
            artist TEXT NOT NULL,
            name TEXT NOT NULL,
            plays INT NOT NULL,
            mbid TEXT,
            album_key TEXT COLLATE "C",
            PRIMARY KEY (user_id, week, kind, rank))
        """,
        "CREATE INDEX weekly_chart_album ON weekly_chart(user_id, album_key, week) INCLUDE (rank, plays) WHERE album_key IS NOT NULL",
    ]

    /// The migration's work (`countEverything`).
    static let countCharts: PostgresDatabase.Migration.Work = { connection, logger, progress in
        try await countEverything(connection, logger, progress: progress)
    }

    /// Counts the charts of every week of every archived person from the
    /// scrobbles (the migration, for archives stored before charts were
    /// kept): person by person in time order, read 50,000 rows at a time,
    /// telling `progress` at each further percent.
    static func countEverything(_ connection: PostgresConnection, _ logger: Logger, progress: MigrationProgress?) async throws {
        var users: [Int64] = []
        for try await id in try await connection.query("SELECT id FROM archive_user ORDER BY id", logger: logger).decode(Int64.self) {
            users.append(id)
        }
        var total = 0
        for try await count in try await connection.query("SELECT count(*) FROM scrobble", logger: logger).decode(Int64.self) { total = Int(count) }
        var counter = progress.map { MigrationCounter(name: "Counting the weekly charts", total: total, report: $0) }
        counter?.advance(to: 0)
        var done = 0
        for id in users {
            // Only the switch: this runs in the migration before choices
            // about single albums existed.
            var folding = AlbumFolding.editions
            for try await folds in try await connection.query("""
                SELECT f.folds_editions FROM archive_user u JOIN album_folding f ON f.name_key = u.name_key WHERE u.id = \(id)
                """, logger: logger).decode(Bool.self) {
                folding = AlbumFolding(foldsEditions: folds)
            }
            var names = ScrobbleTally.FoldedNames(folding)
            var after: (Int64, String, String)?
            // The week being read, which the next slice may continue.
            var openWeek: Int64?
            var open: [Scrobble] = []
            while true {
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
                var finished: [WeeklyRollup.ChartRow] = []
                var read = 0
                for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID)
                    in try await connection.query(query, logger: logger).decode((Int64, String, String, String, String?, String?, String?).self) {
                    let week = LastFMWeekCalendar.week(containing: instant).from
                    if let current = openWeek, current != week {
                        finished += WeeklyRollup.rows(week: current, scrobbles: open, names: &names)
                        open.removeAll(keepingCapacity: true)
                    }
                    openWeek = week
                    open.append(Scrobble(instant: instant, artist: artist, album: album, track: track,
                                         artistMBID: artistMBID, albumMBID: albumMBID, trackMBID: trackMBID))
                    after = (instant, artist, track)
                    read += 1
                }
                if read < 50_000, let current = openWeek {
                    finished += WeeklyRollup.rows(week: current, scrobbles: open, names: &names)
                }
                try await copyCharts(finished, userID: id, connection, logger)
                done += read
                counter?.advance(to: done)
                if read < 50_000 { break }
            }
        }
        counter?.advance(to: total)
        // Counted charts are planned on what is there from the start.
        if total > 0 { try await connection.query("ANALYZE weekly_chart", logger: logger) }
    }
}
