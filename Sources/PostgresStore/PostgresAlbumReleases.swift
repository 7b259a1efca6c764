import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// The albums a person's listens tie together by MusicBrainz release
/// (`AlbumReleases`), as SQLite keeps them (`SQLiteAlbumReleases.swift`):
/// `album_release` (release MBID, album key) from the stored listens,
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
        if try await addTies(touched.releases.map(\.tie), userID: userID, connection, logger) {
            try await regroup(userID: userID, connection, logger)
        }
    }

    /// Adds `ties` in one statement; returns whether a new one names a
    /// release another of the person's albums carries too.
    private static func addTies(_ ties: [AlbumReleases.Tie], userID: Int64, _ connection: PostgresConnection,
                                _ logger: Logger) async throws -> Bool {
        let unique = Array(Set(ties))
        guard !unique.isEmpty else { return false }
        // A data-modifying CTE's rows are not visible to the rest of the
        // statement: new ties are compared with the stored ones and with
        // each other.
        let rows = try await connection.query("""
            WITH new AS (
                INSERT INTO album_release (user_id, mbid, key)
                SELECT \(userID), t.mbid, t.key FROM unnest(\(unique.map(\.mbid))::text[], \(unique.map(\.key))::text[]) AS t(mbid, key)
                ON CONFLICT DO NOTHING RETURNING mbid, key)
            SELECT EXISTS (SELECT 1 FROM new n JOIN album_release r ON r.user_id = \(userID) AND r.mbid = n.mbid AND r.key <> n.key)
                OR EXISTS (SELECT 1 FROM new GROUP BY mbid HAVING count(*) > 1)
            """, logger: logger)
        for try await sharing in rows.decode(Bool.self) { return sharing }
        return false
    }

    /// The ties of every stored listen of the person's.
    private static func storedReleases(userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> [AlbumReleases.Tie] {
        var ties: [AlbumReleases.Tie] = []
        for try await (mbid, artist, album) in try await connection.query("""
            SELECT DISTINCT album_mbid, artist, album FROM scrobble WHERE user_id = \(userID) AND album_mbid IS NOT NULL AND album <> ''
            """, logger: logger).decode((String, String, String).self) {
            if let tie = AlbumReleases.Release(Scrobble(instant: 0, artist: artist, album: album, track: "", albumMBID: mbid))?.tie {
                ties.append(tie)
            }
        }
        return ties
    }

    /// Makes the person's groups what their ties say; when that changes
    /// any, lists the weeks of the albums it touches to count again.
    private static func regroup(userID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        var ties: [AlbumReleases.Tie] = []
        for try await (mbid, key) in try await connection.query("""
            SELECT mbid, key FROM album_release WHERE user_id = \(userID) AND mbid IN (
                SELECT mbid FROM album_release WHERE user_id = \(userID) GROUP BY mbid HAVING count(*) > 1)
            """, logger: logger).decode((String, String).self) {
            ties.append(AlbumReleases.Tie(mbid: mbid, key: key))
        }
        let after = AlbumReleases.groups(ties)
        let before = try await releaseGroups(userID: userID, connection, logger)
        guard after != before else { return }
        let folding = try await foldings(of: [userID], connection, logger)[userID] ?? .editions
        try await connection.query("DELETE FROM album_release_group WHERE user_id = \(userID)", logger: logger)
        if !after.isEmpty {
            let keys = Array(after.keys)
            try await connection.query("""
                INSERT INTO album_release_group (user_id, key, grouped_as)
                SELECT \(userID), g.key, g.grouped_as FROM unnest(\(keys)::text[], \(keys.map { after[$0]! })::text[]) AS g(key, grouped_as)
                """, logger: logger)
        }
        guard folding.foldsEditions else { return }
        var nameKey: String?
        for try await key in try await connection.query("SELECT name_key FROM archive_user WHERE id = \(userID)", logger: logger)
            .decode(String.self) { nameKey = key }
        guard let nameKey else { return }
        try await queueRecount(userID: userID, of: nameKey, albums: AlbumReleases.touched(from: before, to: after, folding: folding),
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
            key TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (user_id, mbid, key))
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
            _ = try await addTies(try await storedReleases(userID: userID, connection, logger), userID: userID, connection, logger)
            try await regroup(userID: userID, connection, logger)
        }
    }
}
