import Foundation
import Stores
import GRDB
import VinylogueCore


/// Everything personal and shareable a SQLite data directory holds, read
/// table by table for `vinylogue db copy` (moving a home installation to
/// PostgreSQL). Rows come in key order, in pages, so a copy can stream a
/// large response cache without holding it in memory.
public struct PersonalDataExport: Sendable {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    /// Every remembered album cover (one small row per album).
    public func covers() async throws -> [PersonalData.CoverRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT artist_key, album_key, artist, album, address, resolved_at FROM album_cover ORDER BY artist_key, album_key")
                .map { PersonalData.CoverRow(artistKey: $0[0], albumKey: $0[1], artist: $0[2], album: $0[3], address: $0[4],
                                resolvedAt: Date(timeIntervalSince1970: TimeInterval($0[5] as Int64))) }
        }
    }

    public func accounts() async throws -> [PersonalData.AccountRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name_key, name, lastfm_session_key, created_at, signed_in_at, visibility FROM account ORDER BY id").map {
                PersonalData.AccountRow(id: $0[0], nameKey: $0[1], name: $0[2], lastFMSessionKey: $0[3],
                           createdAt: Date(timeIntervalSince1970: $0[4]), signedInAt: Date(timeIntervalSince1970: $0[5]), visibility: $0[6])
            }
        }
    }

    public func listEntries() async throws -> [ListedUser] {
        try await writer.read { db in try ListedUser.order(Column("owner"), Column("position")).fetchAll(db) }
    }

    public func settings() async throws -> [PersonalData.SettingRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT owner, key, value FROM owner_setting ORDER BY owner, key").map {
                PersonalData.SettingRow(owner: $0[0], key: $0[1], value: $0[2])
            }
        }
    }

    public func sessions() async throws -> [PersonalData.SessionRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT token_digest, account_id, created_at, expires_at FROM web_session ORDER BY token_digest").map {
                PersonalData.SessionRow(tokenDigest: $0[0], accountID: $0[1], createdAt: Date(timeIntervalSince1970: $0[2]),
                           expiresAt: Date(timeIntervalSince1970: $0[3]))
            }
        }
    }

    /// Every listen-submission token (digests only; one per owner).
    public func listenTokens() async throws -> [PersonalData.ListenTokenRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT owner, token_digest, created_at, mobile_verifier FROM listen_token ORDER BY owner").map {
                PersonalData.ListenTokenRow(owner: $0[0], tokenDigest: $0[1], createdAt: Date(timeIntervalSince1970: $0[2]), mobileVerifier: $0[3])
            }
        }
    }

    /// Every weekly digest subscription, confirmed or not (the send queue
    /// is not carried: a digest due during the move is queued again).
    public func digestSubscriptions() async throws -> [DigestSubscription] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(SQLiteDigestStore.subscriptionColumns) FROM digest_subscription ORDER BY owner")
                .map(SQLiteDigestStore.subscription)
        }
    }

    /// Every person's album choice.
    public func albumFoldings() async throws -> [PersonalData.AlbumFoldingRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT name_key, folds_editions, version FROM album_folding ORDER BY name_key").map {
                PersonalData.AlbumFoldingRow(nameKey: $0[0], foldsEditions: $0[1], version: $0[2])
            }
        }
    }

    /// Every person's choices about single albums.
    public func albumChoiceRows() async throws -> [PersonalData.AlbumChoiceRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT name_key, kind, key, target, artist, album, target_artist, target_album, made_at FROM album_choice
                ORDER BY name_key, made_at, kind, key
                """).compactMap { row in
                SQLiteScrobbleStore.albumChoice(row).map { PersonalData.AlbumChoiceRow(nameKey: row["name_key"], choice: $0) }
            }
        }
    }

    public func musicServers() async throws -> [PersonalData.MusicServerRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT owner, kind, address, username, password, updated_at, keep_years FROM music_server ORDER BY owner
                """).compactMap {
                guard let kind = MusicServerSetting.Kind(rawValue: $0[1]) else { return nil }
                return PersonalData.MusicServerRow(owner: $0[0], setting: MusicServerSetting(kind: kind, address: $0[2], username: $0[3], password: $0[4]),
                                                   keepsYearsAgo: $0[6], updatedAt: Date(timeIntervalSince1970: $0[5]))
            }
        }
    }

    public func forwardingChoices() async throws -> [PersonalData.ForwardingRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT owner, to_lastfm, listenbrainz_token, listenbrainz_user, updated_at FROM forwarding ORDER BY owner").map {
                PersonalData.ForwardingRow(owner: $0[0], toLastFM: $0[1], listenBrainzToken: $0[2], listenBrainzUser: $0[3],
                              updatedAt: Date(timeIntervalSince1970: $0[4]))
            }
        }
    }

    /// Up to `limit` rows of the forwarding outbox with ids above `id`.
    public func outbox(after id: Int64, limit: Int) async throws -> [PersonalData.OutboxRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid, duration, state,
                    attempts, uncertain, due_at, reason, received_at, sent_at
                FROM forward_outbox WHERE id > ? ORDER BY id LIMIT ?
                """, arguments: [id, limit]).map { row in
                PersonalData.OutboxRow(id: row["id"], owner: row["owner"], target: row["target"], listen: SQLiteForwardingOutbox.listen(row),
                                 state: row["state"], attempts: row["attempts"], uncertain: row["uncertain"],
                                 dueAt: Date(timeIntervalSince1970: row["due_at"]),
                                 reason: row["reason"], receivedAt: Date(timeIntervalSince1970: row["received_at"]),
                                 sentAt: (row["sent_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    /// Up to `limit` saved Last.fm answers whose keys sort after `key`.
    public func responses(after key: String, limit: Int) async throws -> [PersonalData.ResponseRow] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT key, body, storedAt, expiresAt FROM response_cache WHERE key > ? ORDER BY key LIMIT ?",
                             arguments: [key, limit]).map {
                PersonalData.ResponseRow(key: $0[0], body: $0[1], storedAt: Date(timeIntervalSince1970: $0[2]),
                            expiresAt: Date(timeIntervalSince1970: $0[3]))
            }
        }
    }

    /// Everyone in the scrobble archive, by name. Rows whose name is not a
    /// valid Last.fm name (none are stored so) are left out.
    public func archivedPeople() async throws -> [PersonalData.ArchivedPerson] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT u.name, (SELECT count(*) FROM scrobble s WHERE s.user_id = u.id),
                    y.from_instant, y.to_instant, y.next_page, y.total_pages, y.page_size,
                    g.seed, g.first_week, g.generated_through
                FROM archive_user u LEFT JOIN sync_state y ON y.user_id = u.id LEFT JOIN generated_history g ON g.user_id = u.id
                ORDER BY u.name_key
                """).compactMap { row -> PersonalData.ArchivedPerson? in
                guard let name = Username(validating: row[0]) else { return nil }
                let sync: SyncState? = (row[2] as Int64?).map { from in
                    SyncState(fromInstant: from, toInstant: row[3], nextPage: row[4], totalPages: row[5], pageSize: row[6])
                }
                let generated: (Int64, Int64, Int64)? = (row[7] as Int64?).map { seed in (seed, row[8], row[9]) }
                return PersonalData.ArchivedPerson(name: name, scrobbles: row[1], pendingSync: sync, generated: generated)
            }
        }
    }

    /// Up to `limit` of `person`'s scrobbles at or after `instant`, in key
    /// order (instant, artist, track), with their origins, starting after
    /// `(instant, artist, track)` when `after` is given.
    public func scrobbles(of person: Username, from instant: Int64, after: (artist: String, track: String)? = nil,
                          limit: Int) async throws -> [(Scrobble, ScrobbleOrigin)] {
        try await writer.read { db in
            guard let id = try SQLiteScrobbleStore.userID(of: person, in: db) else { return [] }
            let rows: [ArchivedScrobble]
            if let after {
                rows = try ArchivedScrobble.fetchAll(db, sql: """
                    SELECT * FROM scrobble WHERE user_id = ? AND (instant, artist, track) > (?, ?, ?)
                    ORDER BY instant, artist, track LIMIT ?
                    """, arguments: [id, instant, after.artist, after.track, limit])
            } else {
                rows = try ArchivedScrobble.fetchAll(db, sql: """
                    SELECT * FROM scrobble WHERE user_id = ? AND instant >= ? ORDER BY instant, artist, track LIMIT ?
                    """, arguments: [id, instant, limit])
            }
            return rows.map { ($0.scrobble, $0.origin) }
        }
    }

    /// Rows per table, for the count check at the end of a copy.
    public func counts() async throws -> [String: Int] {
        try await writer.read { db in
            var counts: [String: Int] = [:]
            for (name, table) in [("accounts", "account"), ("list entries", "list_entry"), ("settings", "owner_setting"),
                                  ("sessions", "web_session"), ("saved Last.fm answers", "response_cache"), ("scrobbles", "scrobble"),
                                  ("remembered covers", "album_cover"), ("listen tokens", "listen_token"),
                                  ("forwarding choices", "forwarding"), ("listens to forward", "forward_outbox"), ("music servers", "music_server"),
                                  ("digest subscriptions", "digest_subscription"), ("album choices", "album_folding"),
                                  ("albums kept apart or joined", "album_choice")] {
                counts[name] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return counts
        }
    }
}
