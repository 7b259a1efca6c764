import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// The scrobble archive in PostgreSQL (`ScrobbleArchive`), for a fleet of
/// instances on one database.
///
/// The schema is SQLite's: `scrobble` keyed by (user, instant, artist,
/// track), user first, so a person's week is one range of the primary key
/// and the table can be hash-partitioned or distributed by `user_id`
/// later (docs/DEPLOY.md). Every write is one transaction holding an
/// advisory lock on its user, so two imports of one person (from any
/// instances) apply the duplicate rule one after the other, and different
/// people never wait for each other. New rows go in with `COPY`, after the
/// rule has left out every listen already archived.
public struct PostgresScrobbleStore: ScrobbleArchive {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    // MARK: - Users

    static func userID(of user: Username, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64? {
        let rows = try await connection.query("SELECT id FROM archive_user WHERE name_key = \(user.key)", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    static func ensureUserID(of user: Username, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        if let id = try await userID(of: user, connection, logger) { return id }
        // A change of their album choices made meanwhile is committed
        // before this write reads them (`changeAlbums`).
        try await lockChoices(of: user.key, connection, logger)
        let rows = try await connection.query("""
            INSERT INTO archive_user(name_key, name) VALUES (\(user.key), \(user.value))
            ON CONFLICT (name_key) DO NOTHING RETURNING id
            """, logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        // Another transaction inserted the same name first and has committed.
        if let id = try await userID(of: user, connection, logger) { return id }
        throw SourceError.storage(detail: "the archive's row for \(user.value) could not be created")
    }

    /// The advisory lock key of one user's scrobbles ("SCRB" in its high bytes).
    static func lockKey(_ userID: Int64) -> Int64 { lockBase ^ userID }
    static let lockBase: Int64 = 0x5343_5242_0000_0000

    /// Up to this many rows are written with one statement rather than
    /// `COPY`, which costs a round trip more.
    static let smallWrite = 64

    /// `user`'s id, with their write lock held until the transaction ends
    /// (the row is created first when missing): one round trip when they
    /// have one, as almost every write finds.
    static func lockedUserID(of user: Username, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        try await lockedUserIDs(of: [user], connection, logger)[user.key]!
    }

    /// The ids of `users` by name key, each with its write lock held until
    /// the transaction ends (rows created first when missing): one round
    /// trip when they all have one. The locks are taken in the order of
    /// the ids, so two transactions locking several people (groups of
    /// listens on two instances) take the ones they share in the same order.
    static func lockedUserIDs(of users: [Username], _ connection: PostgresConnection, _ logger: Logger) async throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        let keys = Array(Set(users.map(\.key)))
        guard !keys.isEmpty else { return ids }
        let rows = try await connection.query("""
            SELECT u.name_key, u.id FROM (SELECT id, name_key FROM archive_user WHERE name_key = ANY(\(keys)) ORDER BY id OFFSET 0) AS u
            CROSS JOIN LATERAL (SELECT pg_advisory_xact_lock(\(lockBase) # u.id)) AS l
            """, logger: logger)
        for try await (key, id) in rows.decode((String, Int64).self) { ids[key] = id }
        var missing = users.filter { ids[$0.key] == nil }
        missing.sort { $0.key < $1.key }
        for user in missing where ids[user.key] == nil {
            let id = try await ensureUserID(of: user, connection, logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey(id)))", logger: logger)
            ids[user.key] = id
        }
        return ids
    }

    /// Runs `body` in a transaction holding `user`'s write lock (the user
    /// row is created first when missing).
    func writing<T: Sendable>(_ user: Username, fence: JobFence? = nil,
                              _ body: @escaping @Sendable (Int64, PostgresConnection, Logger) async throws -> T) async throws(SourceError) -> T {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The job's row before the person's lock, in the order the
                // eraser takes them (`PostgresAccountEraser`): no deadlock.
                try await Self.hold(fence, connection, logger)
                let id = try await Self.lockedUserID(of: user, connection, logger)
                return try await body(id, connection, logger)
            }
        }
    }

    /// Throws `SourceError.cancelled` in the caller's transaction unless
    /// `fence`'s job is still claimed and running (`JobFence`). `FOR SHARE`
    /// holds the job's row until the transaction ends, so a deletion's
    /// `DELETE` or a stop's `UPDATE` of it waits for this write and then
    /// sees (and deletes) what it stored; one that came first leaves no row
    /// to find once it commits. `exclusively` locks it `FOR UPDATE`, for a
    /// write that ends the job in the same transaction.
    static func hold(_ fence: JobFence?, _ connection: PostgresConnection, _ logger: Logger, exclusively: Bool = false) async throws {
        guard let fence else { return }
        let row = fence.row
        var binds = PostgresBindings()
        switch row.key {
        case .text(let text): binds.append(text)
        case .integer(let id): binds.append(id)
        }
        binds.append(fence.holder)
        binds.append(row.running)
        let sql = "SELECT 1 FROM \(row.table) WHERE \(row.column) = $1 AND holder = $2 AND state = $3 FOR \(exclusively ? "UPDATE" : "SHARE")"
        var held = false
        for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) { held = true }
        if !held { throw fence.cancellation }
    }

    /// Runs `body` on one pooled connection, with `user`'s id (nil when
    /// nothing was ever stored for them).
    func reading<T: Sendable>(_ user: Username,
                              _ body: @escaping @Sendable (Int64?, PostgresConnection, Logger) async throws -> T) async throws(SourceError) -> T {
        let logger = self.logger
        return try await mapped {
            try await database.client.withConnection { connection in
                try await body(try await Self.userID(of: user, connection, logger), connection, logger)
            }
        }
    }

    func mapped<T>(_ body: () async throws -> T) async throws(SourceError) -> T {
        do {
            return try await body()
        } catch let error as SourceError {
            throw error
        } catch let error as PostgresTransactionError where error.closureError is SourceError && error.rollbackError == nil {
            // The work's own failure (a fenced write), rolled back as it should be.
            throw error.closureError as! SourceError
        } catch let error as PSQLError {
            throw .storage(detail: error.serverInfo?[.message] ?? "the PostgreSQL database could not be reached (\(error.code))")
        } catch {
            throw .storage(detail: "\(error)")
        }
    }

    public func forgetCopy(of user: Username) async throws(SourceError) -> Int {
        let source = Int16(ScrobbleOrigin.sync(of: user).rawValue)
        return try await writing(user) { id, connection, logger in
            func scrobbles(_ rows: PostgresRowSequence) async throws -> [(Scrobble, ScrobbleOrigin)] {
                var found: [(Scrobble, ScrobbleOrigin)] = []
                for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID, origin, albumArtist, groupMBID)
                    in rows.decode((Int64, String, String, String, String?, String?, String?, Int16, String?, String?).self) {
                    // The echo table keeps unknown ids as ''.
                    func known(_ id: String?) -> String? { id.flatMap { $0.isEmpty ? nil : $0 } }
                    found.append((Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: known(artistMBID),
                                           albumMBID: known(albumMBID), trackMBID: known(trackMBID), albumArtist: albumArtist,
                                           releaseGroupMBID: groupMBID),
                                  ScrobbleOrigin(rawValue: Int(origin)) ?? .lastFMExport))
                }
                return found
            }
            let copied = try await scrobbles(try await connection.query("""
                DELETE FROM scrobble WHERE user_id = \(id) AND source = \(source)
                RETURNING instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source, album_artist, release_group_mbid
                """, logger: logger))
            try await connection.query("DELETE FROM scrobble_echo WHERE user_id = \(id) AND source = \(source)", logger: logger)
            try await connection.query("DELETE FROM sync_state WHERE user_id = \(id)", logger: logger)
            var touched = TouchedWeeks()
            for (s, _) in copied { touched.add(removed: s) }
            try await Self.recount(touched, userID: id, connection, logger)
            // What was set aside is decided again, now the copies are gone.
            let setAside = try await scrobbles(try await connection.query("""
                DELETE FROM scrobble_echo WHERE user_id = \(id)
                RETURNING instant, artist, track, album, artist_mbid, album_mbid, track_mbid, source, album_artist, release_group_mbid
                """, logger: logger))
            _ = try await Self.store(setAside, userID: id, connection, logger)
            return copied.count
        }
    }

    /// Deletes everything archived for `user`: scrobbles (set-aside ones too), rollups, sync
    /// state, the generation mark and the user's row.
    public func forget(_ user: Username) async throws(SourceError) {
        let logger = self.logger
        try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                guard let id = try await Self.userID(of: user, connection, logger) else { return }
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey(id)))", logger: logger)
                for table in ["scrobble", "scrobble_echo", "weekly_chart", "chart_recount", "sync_state", "generated_history"] {
                    try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE user_id = $1", binds: Self.binds(id)), logger: logger)
                }
                try await connection.query("DELETE FROM archive_user WHERE id = \(id)", logger: logger)
                try await connection.query("DELETE FROM album_folding WHERE name_key = \(user.key)", logger: logger)
                try await connection.query("DELETE FROM album_choice WHERE name_key = \(user.key)", logger: logger)
                try await connection.query("DELETE FROM job WHERE person = \(user.key)", logger: logger)
            }
        }
    }

    static func binds(_ id: Int64) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(id)
        return binds
    }

    // MARK: - Reading

    public func storedName(of user: Username) async throws(SourceError) -> Username? {
        let logger = self.logger
        return try await mapped {
            let rows = try await database.client.query("""
                SELECT u.name FROM archive_user u
                WHERE u.name_key = \(user.key) AND EXISTS (SELECT 1 FROM scrobble s WHERE s.user_id = u.id)
                """, logger: logger)
            for try await name in rows.decode(String.self) { return Username(validating: name) }
            return nil
        }
    }

    public func span(for user: Username) async throws(SourceError) -> ClosedRange<Int64>? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            // Rows outside `PlausibleTime.archived` are left out, so one
            // damaged row cannot stretch a user's weeks over aeons.
            let (low, high) = (PlausibleTime.archived.lowerBound, PlausibleTime.archived.upperBound)
            let rows = try await connection.query("""
                SELECT min(instant), max(instant) FROM scrobble WHERE user_id = \(id) AND instant BETWEEN \(low) AND \(high)
                """, logger: logger)
            for try await (first, last) in rows.decode((Int64?, Int64?).self) {
                if let first, let last { return first...last }
            }
            return nil
        }
    }

    public func scrobbleCount(of user: Username) async throws(SourceError) -> Int {
        try await reading(user) { id, connection, logger in
            guard let id else { return 0 }
            let rows = try await connection.query("SELECT count(*) FROM scrobble WHERE user_id = \(id)", logger: logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    public func scrobbles(of user: Username, from: Int64, to: Int64) async throws(SourceError) -> [Scrobble] {
        try await reading(user) { id, connection, logger in
            guard let id else { return [] }
            // Byte order, as SQLite sorts text, whatever the database's collation.
            let rows = try await connection.query("""
                SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid FROM scrobble
                WHERE user_id = \(id) AND instant >= \(from) AND instant < \(to)
                ORDER BY instant, artist COLLATE "C", track COLLATE "C"
                """, logger: logger)
            var found: [Scrobble] = []
            for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID, albumArtist, groupMBID)
                in rows.decode((Int64, String, String, String, String?, String?, String?, String?, String?).self) {
                found.append(Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID,
                                      albumMBID: albumMBID, trackMBID: trackMBID, albumArtist: albumArtist, releaseGroupMBID: groupMBID))
            }
            return found
        }
    }

    public func recentScrobbles(of user: Username, from: Int64, to: Int64, limit: Int, offset: Int) async throws(SourceError) -> RecentScrobbles {
        try await reading(user) { id, connection, logger in
            guard let id else { return RecentScrobbles(total: 0, scrobbles: []) }
            var total = 0
            for try await count in try await connection.query("""
                SELECT count(*) FROM scrobble WHERE user_id = \(id) AND instant >= \(from) AND instant < \(to)
                """, logger: logger).decode(Int64.self) { total = Int(count) }
            let rows = try await connection.query("""
                SELECT instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid FROM scrobble
                WHERE user_id = \(id) AND instant >= \(from) AND instant < \(to)
                ORDER BY instant DESC, artist COLLATE "C" DESC, track COLLATE "C" DESC
                LIMIT \(Int64(max(0, limit))) OFFSET \(Int64(max(0, offset)))
                """, logger: logger)
            var found: [Scrobble] = []
            for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID, albumArtist, groupMBID)
                in rows.decode((Int64, String, String, String, String?, String?, String?, String?, String?).self) {
                found.append(Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID,
                                      albumMBID: albumMBID, trackMBID: trackMBID, albumArtist: albumArtist, releaseGroupMBID: groupMBID))
            }
            return RecentScrobbles(total: total, scrobbles: found)
        }
    }

    public func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            return try await Self.albumsPlayed(userID: id, since: from, connection, logger)
        }
    }

    public func albumSpellings(of user: Username) async throws(SourceError) -> [SpelledAlbum]? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            let rows = try await connection.query("""
                SELECT coalesce(album_artist, artist), album, count(*) FROM scrobble WHERE user_id = \(id) AND album <> ''
                GROUP BY coalesce(album_artist, artist), album
                """, logger: logger)
            var spellings: [SpelledAlbum.Spelling] = []
            for try await (artist, album, plays) in rows.decode((String, String, Int64).self) {
                spellings.append(SpelledAlbum.Spelling(artist: artist, album: album, plays: Int(plays)))
            }
            return SpelledAlbum.grouped(spellings, folding: try await Self.foldings(of: [id], connection, logger)[id] ?? .editions)
        }
    }

    public func albumSpellings(of user: Username, artist: String, album: String) async throws(SourceError) -> SpelledAlbum? {
        try await reading(user) { id, connection, logger in
            guard let id, !album.isEmpty else { return nil }
            let folding = try await Self.foldings(of: [id], connection, logger)[id] ?? .editions
            var counting = SpelledAlbum.Counting(key: folding.folded(.album, artist: artist, name: album).key, folding: folding)
            var weeks: [Int64] = []
            for try await week in try await connection.query("""
                SELECT week FROM weekly_chart WHERE user_id = \(id) AND album_key = \(counting.key) ORDER BY week
                """, logger: logger).decode(Int64.self) {
                weeks.append(week)
            }
            // The album's weeks' plays per spelling, counted by PostgreSQL.
            for spellings in try await Self.spellingPlays(of: id, weeks: weeks, connection, logger).values {
                for spelling in spellings {
                    counting.add(artist: spelling.albumArtist ?? spelling.artist, album: spelling.album, plays: spelling.plays)
                }
            }
            return counting.album
        }
    }

    public func albumWeeks(of user: Username, artist: String, album name: String) async throws(SourceError) -> [AlbumWeek]? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            let folding = try await Self.foldings(of: [id], connection, logger)[id] ?? .editions
            guard let key = ScrobbleTally.key(.album, artist: artist, album: name, track: "", folding: folding) else { return [] }
            return try await Self.albumWeeks(userID: id, key: key, connection, logger)
        }
    }

    /// Whole Last.fm weeks are read from the kept weekly charts
    /// (`PostgresWeeklyRollup.swift`). For any other span PostgreSQL counts
    /// the plays of each exact spelling per week (one
    /// range of the primary key per week, a few hundred groups back); the
    /// groups are merged case-insensitively in Swift by `SpellingCounts`,
    /// as SQLite's rows are. The fence (`OFFSET 0`) keeps one index range
    /// per week whatever the planner believes (see `archivedNear`).
    public func charts(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart]? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            return try await Self.charts(kind, of: user, userID: id, weeks: weeks, connection, logger)
        }
    }

    public func chartReading(_ kind: ChartKind, of user: Username, withCopy: Bool,
                             choosing choose: @escaping @Sendable (ClosedRange<Int64>) -> ChartWeek?) async throws(SourceError) -> ChartReading {
        let logger = self.logger
        return try await mapped {
            try await database.client.withConnection { connection in
                var reading = ChartReading()
                if withCopy { reading.copy = try await PostgresHistoryCopyStore.row(of: user.key, connection, logger) }
                let (low, high) = (PlausibleTime.archived.lowerBound, PlausibleTime.archived.upperBound)
                let rows = try await connection.query("""
                    SELECT u.id, u.name, g.generated_through,
                        (SELECT min(instant) FROM scrobble WHERE user_id = u.id AND instant BETWEEN \(low) AND \(high)),
                        (SELECT max(instant) FROM scrobble WHERE user_id = u.id AND instant BETWEEN \(low) AND \(high)),
                        EXISTS (SELECT 1 FROM scrobble WHERE user_id = u.id)
                    FROM archive_user u LEFT JOIN generated_history g ON g.user_id = u.id
                    WHERE u.name_key = \(user.key)
                    """, logger: logger)
                var id: Int64?
                for try await (userID, name, through, first, last, holds) in rows.decode((Int64, String, Int64?, Int64?, Int64?, Bool).self) {
                    id = userID
                    reading.generatedThrough = through
                    if let first, let last { reading.span = first...last }
                    if holds { reading.storedName = Username(validating: name) }
                }
                if let id, let span = reading.span, let week = choose(span) {
                    reading.chart = try await Self.charts(kind, of: user, userID: id, weeks: [week], connection, logger).first
                }
                return reading
            }
        }
    }

    /// The charts of `kind` for `weeks`, on `connection`.
    static func charts(_ kind: ChartKind, of user: Username, userID id: Int64, weeks: [ChartWeek], _ connection: PostgresConnection,
                       _ logger: Logger) async throws -> [WeeklyChart] {
        guard !weeks.isEmpty else { return [] }
        if WeeklyRollup.canRead(kind, weeks) {
            return try await Self.keptCharts(kind, of: user, userID: id, weeks: weeks, connection, logger)
        }
        // An album counts for its album artist where the listen named one.
        let (artist, name, grouping, mbid, albumFilter) = switch kind {
        case .album: ("coalesce(s.album_artist, s.artist)", "s.album", ", s.album", "s.album_mbid", "AND s.album <> ''")
        case .artist: ("s.artist", "''", "", "s.artist_mbid", "")
        case .track: ("s.artist", "s.track", ", s.track", "s.track_mbid", "")
        }
        var query = PostgresQuery(unsafeSQL: """
            SELECT w.n, \(artist), \(name), count(*), min(s.instant) FILTER (WHERE \(mbid) IS NOT NULL),
                (array_agg(\(mbid) ORDER BY s.instant) FILTER (WHERE \(mbid) IS NOT NULL))[1]
            FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS w(f, t, n)
            CROSS JOIN LATERAL (SELECT * FROM scrobble s WHERE s.user_id = $3 AND s.instant >= w.f AND s.instant < w.t \(albumFilter)
                                OFFSET 0) AS s
            GROUP BY w.n, \(artist)\(grouping)
            """)
        query.binds.append(weeks.map(\.from))
        query.binds.append(weeks.map(\.to))
        query.binds.append(id)
        let folding = try await foldings(of: [id], connection, logger)[id] ?? .editions
        var counts = SpellingCounts(kind: kind, weeks: weeks.count, folding: folding)
        let rows = try await connection.query(query, logger: logger)
        for try await (n, artist, groupName, plays, mbidInstant, groupMBID)
            in rows.decode((Int64, String, String, Int64, Int64?, String?).self) {
            counts.addGroup(week: Int(n) - 1, artist: artist, name: groupName, plays: Int(plays), mbid: groupMBID, mbidInstant: mbidInstant)
        }
        return counts.charts(of: user, weeks: weeks)
    }

    // MARK: - Writing

    public func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) async throws(SourceError) -> InsertCounts {
        // A batch with nothing in it leaves no user row behind.
        guard !batch.isEmpty else { return InsertCounts() }
        return try await writing(user, fence: fence) { id, connection, logger in
            let counts = try await Self.store(batch, userID: id, connection, logger)
            if case let (upload, entry)? = fence?.storedBatch(size: batch.count, counts: counts) {
                // The upload's progress, in the batch's own transaction (the
                // fence found its job claimed by this holder).
                try await connection.query("UPDATE import_job SET stored_batches = stored_batches || \(entry) WHERE id = \(upload)",
                                           logger: logger)
            }
            return counts
        }
    }

    /// Stores `batch` inside the caller's transaction (which holds the
    /// user's lock) by the archive's duplicate rule (`SameListenRule.plan`),
    /// the weeks it touched counted again: the same plan as SQLite's
    /// (`SQLiteScrobbleStore.store(_:userID:in:)`), carried out with `COPY`
    /// and deletes by key. Every import, sync page, received listen and
    /// "Delete what was copied" stores through here or the form below.
    static func store(_ batch: [(Scrobble, ScrobbleOrigin)], userID: Int64,
                      _ connection: PostgresConnection, _ logger: Logger) async throws -> InsertCounts {
        try await store([(userID, batch)], connection, logger)[0]
    }

    /// Stores each batch for its user (different users, each locked by the
    /// caller's transaction) by the duplicate rule, the batches' plans made
    /// side by side: each round of the rule's reads is one query for them
    /// all, their new rows one statement and their weeks one recount.
    /// A lone batch costs what it did before; 64 people's single listens
    /// cost what one person's did.
    static func store(_ batches: [(userID: Int64, batch: [(Scrobble, ScrobbleOrigin)])],
                      _ connection: PostgresConnection, _ logger: Logger) async throws -> [InsertCounts] {
        var plannings = batches.map { SameListenPlanning($0.batch) }
        while true {
            let asking = plannings.indices.filter { plannings[$0].rangesToRead != nil }
            guard !asking.isEmpty else { break }
            let held = try await held(asking.map { (batches[$0].userID, plannings[$0].rangesToRead!, plannings[$0].concerns) }, connection, logger)
            for (n, index) in asking.enumerated() { plannings[index].answer(held: held[n]) }
        }
        let plans = plannings.map { $0.plan! }
        try await execute(zip(batches, plans).map { ($0.userID, $1) }, connection, logger)
        return plans.map(\.counts)
    }

    /// Every listen held with an instant in each entry's ranges, of each
    /// entry's user, counting and set aside, that `concerns` the entry (its
    /// artist and track): one query for all entries, one range of each
    /// table's key per range, the listens found returned per entry. Only
    /// the rows that concern an entry are decoded whole: a person who
    /// listens a lot has many rows nearby, of other tracks. `OFFSET 0` keeps the planner from turning the join around:
    /// until autovacuum has analysed a table an import is filling, it
    /// believes the user has a few rows and scans them all once per range
    /// (100,000 scrobbles an hour apart, each its own range, took 136 s to
    /// import; 1.5 s with the fence).
    static func held(_ asked: [(userID: Int64, ranges: [ClosedRange<Int64>], concerns: @Sendable (String, String) -> Bool)],
                     _ connection: PostgresConnection,
                     _ logger: Logger) async throws -> [[HeldListen]] {
        var found = [[HeldListen]](repeating: [], count: asked.count)
        var entries: [Int64] = [], users: [Int64] = [], lows: [Int64] = [], highs: [Int64] = []
        for (n, entry) in asked.enumerated() {
            for range in entry.ranges {
                entries.append(Int64(n)); users.append(entry.userID); lows.append(range.lowerBound); highs.append(range.upperBound)
            }
        }
        guard !entries.isEmpty else { return found }
        let rows = try await connection.query("""
            SELECT r.n, true, s.instant, s.artist, s.track, s.album, s.artist_mbid, s.album_mbid, s.track_mbid, s.source, s.album_artist, s.release_group_mbid
            FROM unnest(\(entries)::bigint[], \(users)::bigint[], \(lows)::bigint[], \(highs)::bigint[]) AS r(n, user_id, low, high)
            CROSS JOIN LATERAL (SELECT * FROM scrobble WHERE user_id = r.user_id AND instant >= r.low AND instant <= r.high OFFSET 0) AS s
            UNION ALL
            SELECT r.n, false, e.instant, e.artist, e.track, e.album, e.artist_mbid, e.album_mbid, e.track_mbid, e.source, e.album_artist, e.release_group_mbid
            FROM unnest(\(entries)::bigint[], \(users)::bigint[], \(lows)::bigint[], \(highs)::bigint[]) AS r(n, user_id, low, high)
            CROSS JOIN LATERAL (SELECT * FROM scrobble_echo WHERE user_id = r.user_id AND instant >= r.low AND instant <= r.high OFFSET 0) AS e
            """, logger: logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let n = Int(try cells[0].decode(Int64.self))
            let artist = try cells[3].decode(String.self), track = try cells[4].decode(String.self)
            guard asked[n].concerns(artist, track) else { continue }
            let scrobble = Scrobble(instant: try cells[2].decode(Int64.self), artist: artist, album: try cells[5].decode(String.self), track: track,
                                    artistMBID: try cells[6].decode(String?.self), albumMBID: try cells[7].decode(String?.self),
                                    trackMBID: try cells[8].decode(String?.self), albumArtist: try cells[10].decode(String?.self),
                                    releaseGroupMBID: try cells[11].decode(String?.self))
            found[n].append(HeldListen(scrobble, origin: ScrobbleOrigin(rawValue: Int(try cells[9].decode(Int16.self))) ?? .lastFMExport,
                                       counts: try cells[1].decode(Bool.self)))
        }
        return found
    }

    /// Carries out each plan for its user in the caller's transaction:
    /// deletes by key, then `COPY` of what is set aside, then what counts
    /// (a few rows of every plan in one statement, many with `COPY`), then
    /// the weeks touched counted again, all users' together.
    static func execute(_ plans: [(userID: Int64, plan: SameListenPlan)], _ connection: PostgresConnection, _ logger: Logger) async throws {
        var touched = [TouchedWeeks](repeating: TouchedWeeks(), count: plans.count)
        var few: [(userID: Int64, scrobble: Scrobble, origin: ScrobbleOrigin)] = []
        for (n, (userID, plan)) in plans.enumerated() {
            if !plan.uncount.isEmpty {
                try await connection.query("""
                    DELETE FROM scrobble s USING unnest(\(plan.uncount.map(\.instant))::bigint[], \(plan.uncount.map(\.artist))::text[],
                        \(plan.uncount.map(\.track))::text[]) AS k(instant, artist, track)
                    WHERE s.user_id = \(userID) AND s.instant = k.instant AND s.artist = k.artist AND s.track = k.track
                    """, logger: logger)
                for s in plan.uncount { touched[n].add(perhapsInserted: s) }
            }
            if !plan.unsetAside.isEmpty {
                let rows = plan.unsetAside
                try await connection.query("""
                    DELETE FROM scrobble_echo e USING unnest(\(rows.map(\.instant))::bigint[], \(rows.map(\.artist))::text[],
                        \(rows.map(\.track))::text[], \(rows.map(\.album))::text[], \(rows.map { $0.artistMBID ?? "" })::text[],
                        \(rows.map { $0.albumMBID ?? "" })::text[], \(rows.map { $0.trackMBID ?? "" })::text[])
                        AS k(instant, artist, track, album, artist_mbid, album_mbid, track_mbid)
                    WHERE e.user_id = \(userID) AND e.instant = k.instant AND e.artist = k.artist AND e.track = k.track AND e.album = k.album
                        AND e.artist_mbid = k.artist_mbid AND e.album_mbid = k.album_mbid AND e.track_mbid = k.track_mbid
                    """, logger: logger)
            }
            if !plan.setAside.isEmpty {
                // Ids as '' when unknown, as the echo table's key wants them.
                let rows = plan.setAside.map { s, origin in
                    (Scrobble(instant: s.instant, artist: s.artist, album: s.album, track: s.track), origin, s)
                }
                try await CopyText.stream(rows, into: "scrobble_echo", columns: ["user_id", "instant", "artist", "track", "album", "artist_mbid",
                                                                                "album_mbid", "track_mbid", "album_artist", "release_group_mbid",
                                                                                "source"],
                                          connection, logger) { row, buffer in
                    let (_, origin, s) = row
                    buffer.writeString("\(userID)\t\(s.instant)\t")
                    CopyText.write(s.artist, to: &buffer)
                    CopyText.write(s.track, to: &buffer)
                    CopyText.write(s.album, to: &buffer)
                    CopyText.write(s.artistMBID ?? "", to: &buffer)
                    CopyText.write(s.albumMBID ?? "", to: &buffer)
                    CopyText.write(s.trackMBID ?? "", to: &buffer)
                    CopyText.write(s.albumArtist, to: &buffer)
                    CopyText.write(s.releaseGroupMBID, to: &buffer)
                    buffer.writeString(String(origin.rawValue))
                }
            }
            if plan.count.count > smallWrite {
                try await copy(plan.count, userID: userID, into: "scrobble", connection, logger)
            } else {
                few += plan.count.map { (userID, $0.0, $0.1) }
            }
            for (s, _) in plan.count { touched[n].add(inserted: s) }
        }
        try await insertRows(few, connection, logger)
        try await recount(zip(plans, touched).map { ($0.userID, $1) }, connection, logger)
    }

    /// Inserts a few rows, of any users, with one statement, where `COPY`
    /// takes a round trip more (a step of `execute`, as SQLite's
    /// `insertRows` is of its plans). NULs are dropped, as COPY's text drops
    /// them (PostgreSQL's text holds none).
    static func insertRows(_ rows: [(userID: Int64, scrobble: Scrobble, origin: ScrobbleOrigin)],
                       _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        let s = rows.map { CopyText.withoutNUL($0.scrobble) }
        try await connection.query("""
            INSERT INTO scrobble(user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist,
                                 release_group_mbid, source)
            SELECT k.user_id, k.instant, k.artist, k.track, k.album,
                CASE WHEN k.has_artist THEN k.artist_mbid END, CASE WHEN k.has_album THEN k.album_mbid END,
                CASE WHEN k.has_track THEN k.track_mbid END, CASE WHEN k.has_album_artist THEN k.album_artist END,
                CASE WHEN k.has_group THEN k.release_group_mbid END, k.source
            FROM unnest(\(rows.map(\.userID))::bigint[], \(s.map(\.instant))::bigint[], \(s.map(\.artist))::text[], \(s.map(\.track))::text[],
                \(s.map(\.album))::text[],
                \(s.map { $0.artistMBID ?? "" })::text[], \(s.map { $0.artistMBID != nil })::bool[],
                \(s.map { $0.albumMBID ?? "" })::text[], \(s.map { $0.albumMBID != nil })::bool[],
                \(s.map { $0.trackMBID ?? "" })::text[], \(s.map { $0.trackMBID != nil })::bool[],
                \(s.map { $0.albumArtist ?? "" })::text[], \(s.map { $0.albumArtist != nil })::bool[],
                \(s.map { $0.releaseGroupMBID ?? "" })::text[], \(s.map { $0.releaseGroupMBID != nil })::bool[],
                \(rows.map { Int16($0.origin.rawValue) })::smallint[])
                AS k(user_id, instant, artist, track, album, artist_mbid, has_artist, album_mbid, has_album, track_mbid, has_track,
                     album_artist, has_album_artist, release_group_mbid, has_group, source)
            """, logger: logger)
    }

    /// Streams `rows` into `table` with `COPY … FROM STDIN` (text format),
    /// in chunks of about 256 KiB.
    static func copy(_ rows: some Collection<(Scrobble, ScrobbleOrigin)>, userID: Int64, into table: String,
                     _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        try await CopyText.stream(rows, into: table, columns: ["user_id", "instant", "artist", "track", "album", "artist_mbid",
                                                            "album_mbid", "track_mbid", "album_artist", "release_group_mbid", "source"],
                                  connection, logger) { row, buffer in
            let (s, origin) = row
            buffer.writeString("\(userID)\t\(s.instant)\t")
            CopyText.write(s.artist, to: &buffer)
            CopyText.write(s.track, to: &buffer)
            CopyText.write(s.album, to: &buffer)
            CopyText.write(s.artistMBID, to: &buffer)
            CopyText.write(s.albumMBID, to: &buffer)
            CopyText.write(s.trackMBID, to: &buffer)
            CopyText.write(s.albumArtist, to: &buffer)
            CopyText.write(s.releaseGroupMBID, to: &buffer)
            buffer.writeString(String(origin.rawValue))
        }
    }

    public func syncStart(of user: Username) async throws(SourceError) -> SyncStart {
        try await reading(user) { id, connection, logger in
            guard let id else { return SyncStart() }
            let (low, high) = (PlausibleTime.archived.lowerBound, PlausibleTime.archived.upperBound)
            let sources = ScrobbleOrigin.copies(of: user).map { Int16($0.rawValue) }
            var start = SyncStart()
            let newest = try await connection.query("""
                SELECT max(instant) FROM scrobble WHERE user_id = \(id) AND source = ANY(\(sources)) AND instant BETWEEN \(low) AND \(high)
                """, logger: logger)
            for try await instant in newest.decode(Int64?.self) { start.newestFromLastFM = instant }
            let pending = try await connection.query("""
                SELECT from_instant, to_instant, next_page, total_pages, page_size FROM sync_state WHERE user_id = \(id)
                """, logger: logger)
            for try await (from, to, next, total, size) in pending.decode((Int64, Int64, Int32, Int32, Int32).self) {
                start.pending = SyncState(fromInstant: from, toInstant: to, nextPage: Int(next), totalPages: Int(total), pageSize: Int(size))
            }
            return start
        }
    }

    public func beginSync(_ state: SyncState, of user: Username, fence: JobFence?) async throws(SourceError) {
        try await writing(user, fence: fence) { id, connection, logger in try await Self.save(state, userID: id, connection, logger) }
    }

    public func storeSyncPage(_ scrobbles: [Scrobble], of user: Username, next: SyncState?, fence: JobFence?) async throws(SourceError) -> InsertCounts {
        try await writing(user, fence: fence) { id, connection, logger in
            let counts = try await Self.store(scrobbles.map { ($0, ScrobbleOrigin.sync(of: user)) }, userID: id, connection, logger)
            if let next {
                try await Self.save(next, userID: id, connection, logger)
            } else {
                try await connection.query("DELETE FROM sync_state WHERE user_id = \(id)", logger: logger)
            }
            return counts
        }
    }

    static func save(_ state: SyncState, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO sync_state (user_id, from_instant, to_instant, next_page, total_pages, page_size)
            VALUES (\(userID), \(state.fromInstant), \(state.toInstant), \(Int32(state.nextPage)), \(Int32(state.totalPages)), \(Int32(state.pageSize)))
            ON CONFLICT (user_id) DO UPDATE SET from_instant = EXCLUDED.from_instant, to_instant = EXCLUDED.to_instant,
                next_page = EXCLUDED.next_page, total_pages = EXCLUDED.total_pages, page_size = EXCLUDED.page_size
            """, logger: logger)
    }

    /// After a large import, the archive's tables are analysed at once:
    /// until autovacuum gets to them (a minute or more), the planner
    /// believes a new database's tables nearly empty and scans them whole
    /// (a 100,000-scrobble archive's every-year page took 20 ms, not 1).
    public func importFinished(inserted: Int) async throws(SourceError) {
        guard inserted >= Self.analyseAfter else { return }
        let logger = self.logger
        try await mapped { try await database.client.query("ANALYZE scrobble, weekly_chart", logger: logger) }
    }

    /// New rows from one import that make the tables worth analysing.
    public static let analyseAfter = 10_000

    public func generatedThrough(of user: Username) async throws(SourceError) -> Int64? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            let rows = try await connection.query("SELECT generated_through FROM generated_history WHERE user_id = \(id)", logger: logger)
            for try await through in rows.decode(Int64.self) { return through }
            return nil
        }
    }

    public func storeGenerated(_ scrobbles: [Scrobble], of user: Username, through: Int64, seed: Int64,
                               firstWeek: Int64) async throws(SourceError) -> Int {
        try await writing(user) { id, connection, logger in
            let inserted = try await Self.insertKeepingExisting(scrobbles.lazy.map { ($0, ScrobbleOrigin.demo) }, userID: id, connection, logger)
            try await connection.query("""
                INSERT INTO generated_history (user_id, seed, first_week, generated_through) VALUES (\(id), \(seed), \(firstWeek), \(through))
                ON CONFLICT (user_id) DO UPDATE SET generated_through = EXCLUDED.generated_through
                """, logger: logger)
            return inserted
        }
    }

    /// Inserts `rows` exactly as they are, with no duplicate rule, leaving
    /// alone every row whose key is already stored, inside the caller's
    /// transaction, and counts again the weeks that got new rows; returns
    /// how many were new. Not the archive's write (`store`): only rows that
    /// must be stored as they are come this way, the demo's generated
    /// history (`DemoSeed.storeGenerated`) and `db copy`'s rows (archived
    /// once already, by the rule), as SQLite's `insertKeepingExisting`.
    /// Through a temporary table, since `COPY` itself cannot skip conflicts.
    static func insertKeepingExisting(_ rows: some Collection<(Scrobble, ScrobbleOrigin)>, userID: Int64,
                                      _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        try await connection.query("""
            CREATE TEMPORARY TABLE IF NOT EXISTS scrobble_incoming (LIKE scrobble) ON COMMIT DELETE ROWS
            """, logger: logger)
        try await copy(rows, userID: userID, into: "scrobble_incoming", connection, logger)
        // Exactly the rows that were new decide which weeks are counted again.
        let added = try await connection.query("""
            INSERT INTO scrobble SELECT * FROM scrobble_incoming ON CONFLICT DO NOTHING
            RETURNING instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid
            """, logger: logger)
        var touched = TouchedWeeks()
        var inserted = 0
        for try await (instant, artist, track, album, artistMBID, albumMBID, trackMBID, albumArtist, groupMBID)
            in added.decode((Int64, String, String, String, String?, String?, String?, String?, String?).self) {
            touched.add(inserted: Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistMBID,
                                           albumMBID: albumMBID, trackMBID: trackMBID, albumArtist: albumArtist, releaseGroupMBID: groupMBID))
            inserted += 1
        }
        try await recount(touched, userID: userID, connection, logger)
        return inserted
    }
}

/// PostgreSQL's `COPY` text format: columns end in a tab (the last one in
/// the caller's newline), `\N` is NULL, and backslash, tab, newline and
/// carriage return are escaped. NUL, which PostgreSQL text cannot hold,
/// is left out.
enum CopyText {
    /// Streams `rows` into `table` with `COPY … FROM STDIN`, each row
    /// written by `line` (its columns, without the newline), in chunks of
    /// about 256 KiB.
    static func stream<Rows: Sequence>(_ rows: Rows, into table: String, columns: [String],
                                       _ connection: PostgresConnection, _ logger: Logger,
                                       line: (Rows.Element, inout ByteBuffer) -> Void) async throws {
        var iterator = rows.makeIterator()
        guard var next = iterator.next() else { return }
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            var buffer = ByteBuffer()
            buffer.reserveCapacity(300_000)
            while true {
                line(next, &buffer)
                buffer.writeInteger(UInt8(ascii: "\n"))
                if buffer.readableBytes > 256 * 1024 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
                guard let following = iterator.next() else { break }
                next = following
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }

    /// `text` without NULs, as `write` sends it (PostgreSQL's text holds none).
    static func withoutNUL(_ text: String) -> String {
        text.utf8.contains(0) ? String(decoding: text.utf8.filter { $0 != 0 }, as: UTF8.self) : text
    }

    static func withoutNUL(_ text: String?) -> String? { text.map(withoutNUL) }

    /// `s` with every name and id as `write` sends them.
    static func withoutNUL(_ s: Scrobble) -> Scrobble {
        Scrobble(instant: s.instant, artist: withoutNUL(s.artist), album: withoutNUL(s.album), track: withoutNUL(s.track),
                 artistMBID: withoutNUL(s.artistMBID), albumMBID: withoutNUL(s.albumMBID), trackMBID: withoutNUL(s.trackMBID),
                 albumArtist: withoutNUL(s.albumArtist), releaseGroupMBID: withoutNUL(s.releaseGroupMBID))
    }

    static func write(_ text: String?, to buffer: inout ByteBuffer) {
        guard var text else {
            buffer.writeStaticString("\\N\t")
            return
        }
        text.withUTF8 { bytes in
            if !bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 }) {
                buffer.writeBytes(bytes)
            } else {
                for byte in bytes {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                    case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                    case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                    case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                    case 0: break
                    default: buffer.writeInteger(byte)
                    }
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\t"))
    }
}
