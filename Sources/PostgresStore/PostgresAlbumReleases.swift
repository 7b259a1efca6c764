import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// The albums a person's listens tie together by MusicBrainz release
/// (`AlbumReleases`), as SQLite keeps them (`SQLiteAlbumReleases.swift`):
/// `album_release` (release MBID, spelling, album key) from the stored
/// listens, counted or set aside,
/// `album_release_group` (key, group's key) for groups of two or more.
/// The archive's write adds its listens' ties under the person's lock,
/// before it counts their weeks; a tie that changes a group lists the
/// weeks it touches to count again and queues the album job.
extension PostgresScrobbleStore {
    /// Adds the ties of a write's listens, or derives the person's ties
    /// again when it removed listens.
    static func tie(_ touched: TouchedWeeks, userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        if touched.removedListens {
            try await connection.query("DELETE FROM album_release WHERE user_id = \(userID)", logger: logger)
            _ = try await addTies(try await storedReleases(userID: userID, connection, logger), userID: userID, connection, logger)
            try await regroup(userID: userID, connection, logger)
            return
        }
        guard !touched.releases.isEmpty else { return }
        // As stored: PostgreSQL's text holds no NUL.
        let releases = touched.releases.compactMap { r in
            AlbumReleases.Release(mbid: r.mbid, artist: CopyText.withoutNUL(r.artist), album: CopyText.withoutNUL(r.album))
        }
        let sharing = try await addTies(releases, userID: userID, connection, logger)
        if !sharing.isEmpty { try await regroup(userID: userID, reaching: sharing, connection, logger) }
    }

    /// Adds the spellings of `releases` not kept yet, keyed by the rule:
    /// one statement finds them (nearly always none), one more adds them.
    /// Returns the releases a new one ties to another album of the
    /// person's.
    @discardableResult
    private static func addTies(_ releases: [AlbumReleases.Release], userID: Int64, _ connection: PostgresConnection,
                                _ logger: Logger) async throws -> Set<String> {
        let unique = Array(Set(releases))
        guard !unique.isEmpty else { return [] }
        var missing: [AlbumReleases.Release] = []
        for try await (mbid, artist, album) in try await connection.query("""
            SELECT t.mbid, t.artist, t.album
            FROM unnest(\(unique.map(\.mbid))::text[], \(unique.map(\.artist))::text[], \(unique.map(\.album))::text[]) AS t(mbid, artist, album)
            WHERE NOT EXISTS (SELECT 1 FROM album_release r
                WHERE r.user_id = \(userID) AND r.mbid = t.mbid AND r.artist = t.artist AND r.album = t.album)
            """, logger: logger).decode((String, String, String).self) {
            if let release = AlbumReleases.Release(mbid: mbid, artist: artist, album: album) { missing.append(release) }
        }
        guard !missing.isEmpty else { return [] }
        let keys = missing.map(\.tie.key)
        // A data-modifying CTE's rows are not visible to the rest of the
        // statement: new ties are compared with the stored ones and with
        // each other.
        let rows = try await connection.query("""
            WITH new AS (
                INSERT INTO album_release (user_id, mbid, artist, album, key)
                SELECT \(userID), t.mbid, t.artist, t.album, t.key
                FROM unnest(\(missing.map(\.mbid))::text[], \(missing.map(\.artist))::text[], \(missing.map(\.album))::text[], \(keys)::text[])
                    AS t(mbid, artist, album, key)
                ON CONFLICT DO NOTHING RETURNING mbid, key)
            SELECT DISTINCT n.mbid FROM new n JOIN album_release r ON r.user_id = \(userID) AND r.mbid = n.mbid AND r.key <> n.key
            UNION SELECT mbid FROM new GROUP BY mbid HAVING count(DISTINCT key) > 1
            """, logger: logger)
        var sharing = Set<String>()
        for try await mbid in rows.decode(String.self) { sharing.insert(mbid) }
        return sharing
    }

    /// Every tie of every release reachable from `mbids` through the keys
    /// they share (`AlbumReleases.regrouped`): a walk over `album_release`'s
    /// primary key (release to keys) and its key index (key to releases).
    private static func component(of mbids: Set<String>, userID: Int64, _ connection: PostgresConnection,
                                  _ logger: Logger) async throws -> [AlbumReleases.Tie] {
        var seenReleases = mbids, seenKeys = Set<String>()
        var ties: [AlbumReleases.Tie] = []
        var releases = Array(mbids)
        while !releases.isEmpty {
            var keys: [String] = []
            for try await (mbid, key) in try await connection.query("""
                SELECT DISTINCT mbid, key FROM album_release WHERE user_id = \(userID) AND mbid = ANY(\(releases)::text[])
                """, logger: logger).decode((String, String).self) {
                ties.append(AlbumReleases.Tie(mbid: mbid, key: key))
                if seenKeys.insert(key).inserted { keys.append(key) }
            }
            releases = []
            for try await mbid in try await connection.query("""
                SELECT DISTINCT mbid FROM album_release WHERE user_id = \(userID) AND key = ANY(\(keys)::text[])
                """, logger: logger).decode(String.self) where seenReleases.insert(mbid).inserted {
                releases.append(mbid)
            }
        }
        return ties
    }

    /// The releases of every stored listen of the person's, counted or set
    /// aside, by release and by release group. The upgrade that first tied
    /// releases ran before listens kept album artists and release groups
    /// (`upgrading`): there were no columns yet.
    private static func storedReleases(userID: Int64, upgrading: Bool = false, _ connection: PostgresConnection,
                                       _ logger: Logger) async throws -> [AlbumReleases.Release] {
        var releases: [AlbumReleases.Release] = []
        let artist = upgrading ? "artist" : "coalesce(album_artist, artist)"
        let groups = upgrading ? "" : """
            UNION SELECT release_group_mbid, \(artist), album FROM scrobble
            WHERE user_id = \(userID) AND release_group_mbid IS NOT NULL AND album <> ''
            UNION SELECT release_group_mbid, \(artist), album FROM scrobble_echo
            WHERE user_id = \(userID) AND release_group_mbid IS NOT NULL AND album <> ''
            """
        for try await (mbid, artist, album) in try await connection.query("""
            SELECT album_mbid, \(unescaped: artist), album FROM scrobble WHERE user_id = \(userID) AND album_mbid IS NOT NULL AND album <> ''
            UNION SELECT album_mbid, \(unescaped: artist), album FROM scrobble_echo WHERE user_id = \(userID) AND album_mbid <> '' AND album <> ''
            \(unescaped: groups)
            """, logger: logger).decode((String, String, String).self) {
            if let release = AlbumReleases.Release(mbid: mbid, artist: artist, album: album) { releases.append(release) }
        }
        return releases
    }

    /// Makes the person's groups what their ties say — only those the
    /// releases `reaching` reach, when a write added ties to them, or all
    /// of them; when that changes any, rewrites the rows that changed and
    /// lists the weeks of the albums it touches to count again.
    private static func regroup(userID: Int64, reaching: Set<String>? = nil, _ connection: PostgresConnection,
                                _ logger: Logger) async throws {
        let before = try await releaseGroups(userID: userID, connection, logger)
        let after: [String: String]
        if let reaching {
            after = AlbumReleases.regrouped(before, component: try await component(of: reaching, userID: userID, connection, logger))
        } else {
            var ties: [AlbumReleases.Tie] = []
            for try await (mbid, key) in try await connection.query("""
                SELECT DISTINCT mbid, key FROM album_release WHERE user_id = \(userID) AND mbid IN (
                    SELECT mbid FROM album_release WHERE user_id = \(userID) GROUP BY mbid HAVING count(DISTINCT key) > 1)
                """, logger: logger).decode((String, String).self) {
                ties.append(AlbumReleases.Tie(mbid: mbid, key: key))
            }
            after = AlbumReleases.keeping(before, AlbumReleases.groups(ties))
        }
        guard after != before else { return }
        let folding = try await foldings(of: [userID], connection, logger)[userID] ?? .editions
        let changes = AlbumReleases.changes(from: before, to: after)
        if !changes.gone.isEmpty {
            try await connection.query("""
                DELETE FROM album_release_group WHERE user_id = \(userID) AND key = ANY(\(changes.gone)::text[])
                """, logger: logger)
        }
        if !changes.set.isEmpty {
            try await connection.query("""
                INSERT INTO album_release_group (user_id, key, grouped_as)
                SELECT \(userID), g.key, g.grouped_as FROM unnest(\(changes.set.map(\.key))::text[], \(changes.set.map(\.group))::text[])
                    AS g(key, grouped_as)
                ON CONFLICT (user_id, key) DO UPDATE SET grouped_as = excluded.grouped_as
                """, logger: logger)
        }
        guard folding.foldsEditions else { return }
        var nameKey: String?
        for try await key in try await connection.query("SELECT name_key FROM archive_user WHERE id = \(userID)", logger: logger)
            .decode(String.self) { nameKey = key }
        guard let nameKey else { return }
        try await queueRecount(userID: userID, of: nameKey, albums: AlbumReleases.touched(to: after, folding: folding),
                               at: ChartRecount.dueAtOnce, connection, logger)
    }

    /// The person's groups as kept: every key of a group, to its group's key.
    static func releaseGroups(userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> [String: String] {
        var groups: [String: String] = [:]
        for try await (key, group) in try await connection.query("""
            SELECT key, grouped_as FROM album_release_group WHERE user_id = \(userID)
            """, logger: logger).decode((String, String).self) {
            groups[key] = group
        }
        return groups
    }

    static let releaseTables: [String] = [
        """
        CREATE TABLE album_release (
            user_id BIGINT NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
            mbid TEXT COLLATE "C" NOT NULL,
            artist TEXT NOT NULL,
            album TEXT NOT NULL,
            key TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (user_id, mbid, artist, album))
        """,
        """
        CREATE TABLE album_release_group (
            user_id BIGINT NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
            key TEXT COLLATE "C" NOT NULL,
            grouped_as TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (user_id, key))
        """,
    ]

    /// The migration's work: every archived person's ties from their
    /// listens; whoever has a group gets its albums' weeks counted again.
    static let tieReleases: PostgresDatabase.Migration.Work = { connection, logger, _ in
        var users: [Int64] = []
        for try await id in try await connection.query("SELECT id FROM archive_user ORDER BY id", logger: logger).decode(Int64.self) {
            users.append(id)
        }
        for userID in users {
            _ = try await addTies(try await storedReleases(userID: userID, upgrading: true, connection, logger), userID: userID,
                                  connection, logger)
            try await regroup(userID: userID, connection, logger)
        }
    }
}
