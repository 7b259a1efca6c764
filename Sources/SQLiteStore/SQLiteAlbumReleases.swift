import Foundation
import GRDB
import Stores
import VinylogueCore

/// The albums a person's listens tie together by MusicBrainz release
/// (`AlbumReleases`), derived from their stored listens (counted or set
/// aside): `album_release` holds each release MBID with each spelling its
/// listens carry it on, and the spelling's album key;
/// `album_release_group` each key of a group of two or more with the
/// group's key, which `AlbumFolding.sameRelease` applies.
///
/// The archive's write adds the ties of the listens it stores, in its
/// transaction and before it counts their weeks (so they count in their
/// group); a tie that changes a group puts the weeks of the albums it
/// touches on the person's list to count again (`chart_recount`) and
/// queues the album job. Removing listens (forgetting a copy) derives the
/// person's ties again from what is left.
extension SQLiteScrobbleStore {
    /// Adds the ties of a write's listens (`touched.releases`), or derives
    /// them all again when it removed listens.
    static func tie(_ touched: TouchedWeeks, userID: Int64, in db: Database) throws {
        if touched.removedListens {
            try db.execute(sql: "DELETE FROM album_release WHERE user_id = ?", arguments: [userID])
            try addTies(try storedReleases(userID: userID, in: db), userID: userID, in: db)
            try regroup(userID: userID, in: db)
            return
        }
        guard !touched.releases.isEmpty else { return }
        let sharing = try addTies(touched.releases.compactMap(\.release), userID: userID, in: db)
        if !sharing.isEmpty { try regroup(userID: userID, reaching: sharing, in: db) }
    }

    /// Adds the spellings of `releases` not kept yet, keyed by the rule;
    /// returns the releases a new one ties to another album of the
    /// person's (which may change a group).
    @discardableResult
    private static func addTies(_ releases: some Collection<AlbumReleases.Release>, userID: Int64, in db: Database) throws -> Set<String> {
        let known = try db.cachedStatement(sql: "SELECT 1 FROM album_release WHERE user_id = ? AND mbid = ? AND artist = ? AND album = ?")
        let insert = try db.cachedStatement(sql: "INSERT INTO album_release (user_id, mbid, artist, album, key) VALUES (?, ?, ?, ?, ?)")
        let shared = try db.cachedStatement(sql: "SELECT 1 FROM album_release WHERE user_id = ? AND mbid = ? AND key <> ? LIMIT 1")
        var sharing = Set<String>()
        for release in Set(releases) where try !(Bool.fetchOne(known, arguments: [userID, release.mbid, release.artist, release.album]) ?? false) {
            let tie = release.tie
            try insert.execute(arguments: [userID, release.mbid, release.artist, release.album, tie.key])
            if !sharing.contains(tie.mbid), try Bool.fetchOne(shared, arguments: [userID, tie.mbid, tie.key]) ?? false { sharing.insert(tie.mbid) }
        }
        return sharing
    }

    /// Every tie of every release reachable from `mbids` through the keys
    /// they share (`AlbumReleases.regrouped`): a walk over
    /// `album_release`'s primary key (release to keys) and its key index
    /// (key to releases), 500 values a statement.
    private static func component(of mbids: Set<String>, userID: Int64, in db: Database) throws -> [AlbumReleases.Tie] {
        var seenReleases = mbids, seenKeys = Set<String>()
        var ties: [AlbumReleases.Tie] = []
        var releases = Array(mbids)
        while !releases.isEmpty {
            var keys: [String] = []
            for chunk in stride(from: 0, to: releases.count, by: 500).map({ releases[$0..<min($0 + 500, releases.count)] }) {
                let marks = chunk.map { _ in "?" }.joined(separator: ", ")
                for row in try Row.fetchAll(db, sql: "SELECT DISTINCT mbid, key FROM album_release WHERE user_id = ? AND mbid IN (\(marks))",
                                            arguments: StatementArguments([userID] + Array(chunk))) {
                    let tie = AlbumReleases.Tie(mbid: row[0], key: row[1])
                    ties.append(tie)
                    if seenKeys.insert(tie.key).inserted { keys.append(tie.key) }
                }
            }
            releases = []
            for chunk in stride(from: 0, to: keys.count, by: 500).map({ keys[$0..<min($0 + 500, keys.count)] }) {
                let marks = chunk.map { _ in "?" }.joined(separator: ", ")
                for mbid in try String.fetchAll(db, sql: """
                    SELECT DISTINCT mbid FROM album_release INDEXED BY album_release_key WHERE user_id = ? AND key IN (\(marks))
                    """, arguments: StatementArguments([userID] + Array(chunk))) where seenReleases.insert(mbid).inserted {
                    releases.append(mbid)
                }
            }
        }
        return ties
    }

    /// The releases of every stored listen of the person's, counted or set
    /// aside, by release and by release group. The upgrade that first tied
    /// releases ran before listens kept album artists and release groups
    /// (`upgrading`): there were no columns yet.
    private static func storedReleases(userID: Int64, upgrading: Bool = false, in db: Database) throws -> [AlbumReleases.Release] {
        let artist = upgrading ? "artist" : "coalesce(album_artist, artist)"
        let groups = upgrading ? "" : """
            UNION SELECT release_group_mbid, \(artist), album FROM scrobble
            WHERE user_id = ?1 AND release_group_mbid IS NOT NULL AND album <> ''
            UNION SELECT release_group_mbid, \(artist), album FROM scrobble_echo
            WHERE user_id = ?1 AND release_group_mbid IS NOT NULL AND album <> ''
            """
        return try Row.fetchAll(db, sql: """
            SELECT album_mbid, \(artist), album FROM scrobble WHERE user_id = ?1 AND album_mbid IS NOT NULL AND album <> ''
            UNION SELECT album_mbid, \(artist), album FROM scrobble_echo WHERE user_id = ?1 AND album_mbid <> '' AND album <> ''
            \(groups)
            """, arguments: [userID]).compactMap { row in AlbumReleases.Release(mbid: row[0], artist: row[1], album: row[2]) }
    }

    /// Makes the person's groups what their ties say — only those the
    /// releases `reaching` reach, when a write added ties to them, or all
    /// of them; when that changes any, rewrites the rows that changed and
    /// lists the weeks of the albums it touches to count again.
    private static func regroup(userID: Int64, reaching: Set<String>? = nil, in db: Database) throws {
        let before = try releaseGroups(userID: userID, in: db)
        let after: [String: String]
        if let reaching {
            after = AlbumReleases.regrouped(before, component: try component(of: reaching, userID: userID, in: db))
        } else {
            after = AlbumReleases.keeping(before, AlbumReleases.groups(try Row.fetchAll(db, sql: """
                SELECT DISTINCT mbid, key FROM album_release WHERE user_id = ?1 AND mbid IN (
                    SELECT mbid FROM album_release WHERE user_id = ?1 GROUP BY mbid HAVING count(DISTINCT key) > 1)
                """, arguments: [userID]).map { AlbumReleases.Tie(mbid: $0[0], key: $0[1]) }))
        }
        guard after != before else { return }
        let folding = try WeeklyRollup.folding(userID: userID, in: db)
        let changes = AlbumReleases.changes(from: before, to: after)
        let delete = try db.cachedStatement(sql: "DELETE FROM album_release_group WHERE user_id = ? AND key = ?")
        for key in changes.gone { try delete.execute(arguments: [userID, key]) }
        let write = try db.cachedStatement(sql: "INSERT OR REPLACE INTO album_release_group (user_id, key, grouped_as) VALUES (?, ?, ?)")
        for row in changes.set { try write.execute(arguments: [userID, row.key, row.group]) }
        guard folding.foldsEditions,
              let nameKey = try String.fetchOne(db, sql: "SELECT name_key FROM archive_user WHERE id = ?", arguments: [userID]) else { return }
        try queueRecount(userID: userID, of: nameKey, albums: AlbumReleases.touched(to: after, folding: folding),
                         at: ChartRecount.dueAtOnce, in: db)
    }

    /// The person's groups as kept: every key of a group, to its group's key.
    static func releaseGroups(userID: Int64, in db: Database) throws -> [String: String] {
        var groups: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key, grouped_as FROM album_release_group WHERE user_id = ?"),
                                    arguments: [userID]) {
            groups[row[0]] = row[1]
        }
        return groups
    }

    /// The tables, filled from every archived person's listens; whoever
    /// has a group gets its albums' weeks counted again by the album job.
    /// The key index a write's new ties are followed by (`component`).
    static func registerReleaseKeyIndexMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("album releases found by key") { db in
            try db.execute(sql: "CREATE INDEX album_release_key ON album_release(user_id, key)")
        }
    }

    static func registerAlbumReleaseMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("albums tied by MusicBrainz release") { db in
            try db.execute(sql: """
                CREATE TABLE album_release (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    mbid TEXT NOT NULL,
                    artist TEXT NOT NULL,
                    album TEXT NOT NULL,
                    key TEXT NOT NULL,
                    PRIMARY KEY (user_id, mbid, artist, album)
                ) WITHOUT ROWID;
                CREATE TABLE album_release_group (
                    user_id INTEGER NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                    key TEXT NOT NULL,
                    grouped_as TEXT NOT NULL,
                    PRIMARY KEY (user_id, key)
                ) WITHOUT ROWID;
                """)
            for userID in try Int64.fetchAll(db, sql: "SELECT id FROM archive_user ORDER BY id") {
                try addTies(try storedReleases(userID: userID, upgrading: true, in: db), userID: userID, in: db)
                try regroup(userID: userID, in: db)
            }
        }
    }
}
