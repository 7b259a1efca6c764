import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

extension PostgresScrobbleStore {
    public func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
        let logger = self.logger
        return try await mapped {
            try await database.client.withConnection { connection in
                var folds = true
                for try await kept in try await connection.query("SELECT folds_editions FROM album_folding WHERE name_key = \(user.key)",
                                                                 logger: logger).decode(Bool.self) {
                    folds = kept
                }
                var groups: [String: String] = [:]
                for try await (key, group) in try await connection.query("""
                    SELECT g.key, g.grouped_as FROM album_release_group g JOIN archive_user u ON u.id = g.user_id WHERE u.name_key = \(user.key)
                    """, logger: logger).decode((String, String).self) {
                    groups[key] = group
                }
                return AlbumFolding(foldsEditions: folds, choices: try await Self.albumChoices(nameKey: user.key, connection, logger),
                                    sameRelease: groups)
            }
        }
    }

    public func albumChoices(of user: Username) async throws(SourceError) -> [AlbumChoice] {
        let logger = self.logger
        return try await mapped {
            try await database.client.withConnection { connection in try await Self.albumChoices(nameKey: user.key, connection, logger) }
        }
    }

    public func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The job's row first, as every fenced write takes it.
                try await Self.hold(fence, connection, logger)
                // The choices' lock, then the person's, as `changeAlbums` takes them.
                try await Self.lockChoices(of: user.key, connection, logger)
                let id = try await Self.userID(of: user, connection, logger)
                if id != nil { _ = try await Self.lockedUserID(of: user, connection, logger) }
                var current = true
                for try await folds in try await connection.query("""
                    SELECT folds_editions FROM album_folding WHERE name_key = \(user.key) FOR UPDATE
                    """, logger: logger).decode(Bool.self) {
                    current = folds
                }
                guard current != folding.foldsEditions else { return false }
                try await connection.query("""
                    INSERT INTO album_folding (name_key, folds_editions, version) VALUES (\(user.key), \(folding.foldsEditions), 1)
                    ON CONFLICT (name_key) DO UPDATE SET folds_editions = excluded.folds_editions, version = album_folding.version + 1
                    """, logger: logger)
                if let id { try await Self.queueRecount(userID: id, of: user.key, albums: nil, at: now, connection, logger) }
                return true
            }
        }
    }

    public func changeAlbums(_ change: AlbumChoiceChange, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The job's row first, as every fenced write takes it.
                try await Self.hold(fence, connection, logger)
                // First: a person's first write waits for this (and this
                // then sees their row), so no change misses their charts.
                try await Self.lockChoices(of: user.key, connection, logger)
                let id = try await Self.userID(of: user, connection, logger)
                if id != nil { _ = try await Self.lockedUserID(of: user, connection, logger) }
                let choices = try await Self.albumChoices(nameKey: user.key, connection, logger)
                let groups = if let id { try await Self.releaseGroups(userID: id, connection, logger) } else { [String: String]() }
                guard let changed = change.applied(to: choices, sameRelease: groups, at: now) else { return false }
                try await Self.replaceAlbumChoices(changed.choices, nameKey: user.key, connection, logger)
                if let id { try await Self.queueRecount(userID: id, of: user.key, albums: changed.touched, at: now, connection, logger) }
                return true
            }
        }
    }

    public func countAgain(_ user: Username, under claim: JobClaim?, at now: Date) async throws(SourceError) -> Bool {
        let logger = self.logger
        return try await mapped {
            try await database.client.withTransaction(logger: logger) { connection in
                // The job's row before the person's lock, as `writing` takes them;
                // a change of their choices waits for the lock, so a week it
                // lists after this slice's read finds the job ended and queues another.
                try await Self.hold(claim?.fence, connection, logger, exclusively: true)
                var weeks: [Int64] = []
                var id: Int64?
                if try await Self.userID(of: user, connection, logger) != nil {
                    let locked = try await Self.lockedUserID(of: user, connection, logger)
                    id = locked
                    for try await week in try await connection.query("""
                        SELECT week FROM chart_recount WHERE user_id = \(locked) ORDER BY week LIMIT \(ChartRecount.weeksPerSlice)
                        """, logger: logger).decode(Int64.self) {
                        weeks.append(week)
                    }
                }
                guard let id, !weeks.isEmpty else {
                    if let claim { _ = try await PostgresJobQueue.end(claim, as: .done, at: now, connection, logger) }
                    return false
                }
                let folding = try await Self.foldings(of: [id], connection, logger)[id] ?? .editions
                let spellings = try await Self.spellingPlays(of: id, weeks: weeks, connection, logger)
                try await connection.query("DELETE FROM weekly_chart WHERE user_id = \(id) AND week = ANY(\(weeks)::bigint[])", logger: logger)
                var names = ScrobbleTally.FoldedNames(folding)
                var rows: [WeeklyRollup.ChartRow] = []
                for week in weeks { rows += WeeklyRollup.rows(week: week, spellings: spellings[week] ?? [], names: &names) }
                try await Self.copyCharts(rows, userID: id, connection, logger)
                try await connection.query("DELETE FROM chart_recount WHERE user_id = \(id) AND week = ANY(\(weeks)::bigint[])", logger: logger)
                return true
            }
        }
    }

    /// `userID`'s plays per spelling in each of `weeks`, counted by
    /// PostgreSQL (`WeeklyRollup.SpellingPlays`): a tenth of the rows the
    /// week's scrobbles are, which is most of what counting them again cost.
    static func spellingPlays(of userID: Int64, weeks: [Int64], _ connection: PostgresConnection,
                              _ logger: Logger) async throws -> [Int64: [WeeklyRollup.SpellingPlays]] {
        let rows = try await connection.query("""
            SELECT w.f, s.artist, s.album_artist, s.album, count(*),
                (array_agg(s.album_mbid ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.album_mbid <> ''))[1],
                (array_agg(s.instant ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.album_mbid <> ''))[1],
                (array_agg(s.track ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.album_mbid <> ''))[1],
                (array_agg(s.artist_mbid ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.artist_mbid <> ''))[1],
                (array_agg(s.instant ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.artist_mbid <> ''))[1],
                (array_agg(s.track ORDER BY s.instant, s.track COLLATE "C") FILTER (WHERE s.artist_mbid <> ''))[1]
            FROM unnest(\(weeks)::bigint[], \(weeks.map(WeeklyRollup.end(of:)))::bigint[]) AS w(f, t)
            CROSS JOIN LATERAL (SELECT * FROM scrobble WHERE user_id = \(userID) AND instant >= w.f AND instant < w.t OFFSET 0) AS s
            GROUP BY w.f, s.artist, s.album_artist, s.album
            """, logger: logger)
        var found: [Int64: [WeeklyRollup.SpellingPlays]] = [:]
        for try await (week, artist, albumArtist, album, plays, albumMBID, albumInstant, albumTrack, artistMBID, artistInstant, artistTrack)
            in rows.decode((Int64, String, String?, String, Int64, String?, Int64?, String?, String?, Int64?, String?).self) {
            func first(_ id: String?, _ instant: Int64?, _ track: String?) -> WeeklyRollup.SpellingPlays.FirstID? {
                guard let id, let instant, let track else { return nil }
                return WeeklyRollup.SpellingPlays.FirstID(id: id, instant: instant, track: track)
            }
            found[week, default: []].append(WeeklyRollup.SpellingPlays(artist: artist, albumArtist: albumArtist, album: album, plays: Int(plays),
                                                                      albumMBID: first(albumMBID, albumInstant, albumTrack),
                                                                      artistMBID: first(artistMBID, artistInstant, artistTrack)))
        }
        return found
    }

    /// The advisory lock key of one person's album choices ("ALBC").
    static let choicesLockBase: Int64 = 0x414C_4243_0000_0000

    /// Holds the lock of `nameKey`'s album choices until the transaction
    /// ends: taken by every change of them, and by the write that creates
    /// the person's archive row (`ensureUserID`), before it reads them.
    static func lockChoices(of nameKey: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(choicesLockBase) # hashtext(\(nameKey)))", logger: logger)
    }

    static func albumChoices(nameKey: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> [AlbumChoice] {
        var choices: [AlbumChoice] = []
        for try await (kind, key, target, artist, album, targetArtist, targetAlbum, madeAt) in try await connection.query("""
            SELECT kind, key, target, artist, album, target_artist, target_album, made_at FROM album_choice
            WHERE name_key = \(nameKey) ORDER BY made_at, kind, key
            """, logger: logger).decode((String, String, String?, String, String, String?, String?, Double).self) {
            guard let kind = AlbumChoice.Kind(rawValue: kind) else { continue }
            choices.append(AlbumChoice(kind: kind, key: key, target: target, artist: artist, album: album, targetArtist: targetArtist,
                                       targetAlbum: targetAlbum, madeAt: Date(timeIntervalSince1970: madeAt)))
        }
        return choices
    }

    /// The person's choices become `choices`.
    static func replaceAlbumChoices(_ choices: [AlbumChoice], nameKey: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM album_choice WHERE name_key = \(nameKey)", logger: logger)
        for c in choices {
            try await connection.query("""
                INSERT INTO album_choice (name_key, kind, key, target, artist, album, target_artist, target_album, made_at)
                VALUES (\(nameKey), \(c.kind.rawValue), \(CopyText.withoutNUL(c.key)), \(c.target.map(CopyText.withoutNUL)),
                    \(CopyText.withoutNUL(c.artist)), \(CopyText.withoutNUL(c.album)), \(c.targetArtist.map(CopyText.withoutNUL)),
                    \(c.targetAlbum.map(CopyText.withoutNUL)), \(c.madeAt.timeIntervalSince1970))
                """, logger: logger)
        }
    }

    /// Puts the weeks of `albums` (album keys as the kept charts hold
    /// them; every week when nil) on `userID`'s list of weeks to count
    /// again, and queues the job that counts them.
    static func queueRecount(userID: Int64, of nameKey: String, albums: Set<String>?, at now: Date, _ connection: PostgresConnection,
                             _ logger: Logger) async throws {
        if let albums {
            guard !albums.isEmpty else { return }
            try await connection.query("""
                INSERT INTO chart_recount (user_id, week)
                SELECT DISTINCT user_id, week FROM weekly_chart WHERE user_id = \(userID) AND album_key = ANY(\(albums.sorted())::text[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        } else {
            // Every week with a play has an artist at rank 1 (kind 1).
            try await connection.query("""
                INSERT INTO chart_recount (user_id, week)
                SELECT user_id, week FROM weekly_chart WHERE user_id = \(userID) AND kind = 1 AND rank = 1
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        _ = try await PostgresJobQueue.enqueue(.albumFolding, personKey: nameKey, key: nameKey, payload: "", machine: nil, notBefore: nil,
                                               at: now, connection, logger)
    }

    /// The person's single-album choices and their list of weeks to count
    /// again; a job of the old kind (which counted every week) gets every
    /// week of its person on the list.
    static let choiceTables: [String] = [
        """
        CREATE TABLE album_choice (
            name_key TEXT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT COLLATE "C" NOT NULL,
            target TEXT COLLATE "C",
            artist TEXT NOT NULL,
            album TEXT NOT NULL,
            target_artist TEXT,
            target_album TEXT,
            made_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (name_key, kind, key))
        """,
        """
        CREATE TABLE chart_recount (
            user_id BIGINT NOT NULL,
            week BIGINT NOT NULL,
            PRIMARY KEY (user_id, week))
        """,
        """
        INSERT INTO chart_recount (user_id, week)
        SELECT c.user_id, c.week FROM weekly_chart c JOIN archive_user u ON u.id = c.user_id
        WHERE c.kind = 1 AND c.rank = 1 AND u.name_key IN (
            SELECT key FROM job WHERE kind = '\(JobKind.albumFolding.rawValue)' AND state IN ('queued', 'running'))
        ON CONFLICT DO NOTHING
        """,
    ]
}
