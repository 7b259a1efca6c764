import Stores
import Foundation
import Logging
import VinylogueCore
import PostgresNIO

/// Writes what `PersonalDataExport` reads into PostgreSQL, for `vinylogue
/// db copy`. Every write is an upsert, so a copy that stopped can simply
/// be run again: it ends with the destination holding the source's rows.
/// Account ids are kept (lists and sessions refer to them), and the
/// account id sequence moves past them.
public struct PostgresCopy: Sendable {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    public func write(_ accounts: [PersonalData.AccountRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for a in accounts {
                try await connection.query("""
                    INSERT INTO account(id, name_key, name, lastfm_session_key, created_at, signed_in_at, visibility) OVERRIDING SYSTEM VALUE
                    VALUES (\(a.id), \(a.nameKey), \(a.name), \(a.lastFMSessionKey), \(a.createdAt), \(a.signedInAt), \(a.visibility))
                    ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, name = EXCLUDED.name,
                        lastfm_session_key = EXCLUDED.lastfm_session_key, signed_in_at = EXCLUDED.signed_in_at,
                        visibility = EXCLUDED.visibility
                    """, logger: logger)
            }
            try await connection.query("""
                SELECT setval(pg_get_serial_sequence('account', 'id'), GREATEST((SELECT max(id) FROM account), 1))
                """, logger: logger)
        }
    }

    /// Remembered covers; an answer the database already holds (from the
    /// fleet, or an earlier copy) is kept.
    public func write(_ covers: [PersonalData.CoverRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for c in covers {
                try await connection.query("""
                    INSERT INTO album_cover(artist_key, album_key, artist, album, address, resolved_at)
                    VALUES (\(c.artistKey), \(c.albumKey), \(c.artist), \(c.album), \(c.address), \(c.resolvedAt))
                    ON CONFLICT (artist_key, album_key) DO NOTHING
                    """, logger: logger)
            }
        }
    }

    public func write(_ entries: [ListedUser]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for e in entries {
                try await connection.query("""
                    INSERT INTO list_entry(owner, key, name, position, is_me) VALUES (\(e.owner), \(e.key), \(e.name), \(Int64(e.position)), \(e.isMe))
                    ON CONFLICT (owner, key) DO UPDATE SET name = EXCLUDED.name, position = EXCLUDED.position, is_me = EXCLUDED.is_me
                    """, logger: logger)
            }
        }
    }

    public func write(_ settings: [PersonalData.SettingRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for s in settings {
                try await connection.query("""
                    INSERT INTO owner_setting(owner, key, value) VALUES (\(s.owner), \(s.key), \(s.value))
                    ON CONFLICT (owner, key) DO UPDATE SET value = EXCLUDED.value
                    """, logger: logger)
            }
        }
    }

    public func write(_ sessions: [PersonalData.SessionRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for s in sessions {
                try await connection.query("""
                    INSERT INTO web_session(token_digest, account_id, created_at, expires_at)
                    VALUES (\(s.tokenDigest), \(s.accountID), \(s.createdAt), \(s.expiresAt))
                    ON CONFLICT (token_digest) DO UPDATE SET expires_at = EXCLUDED.expires_at
                    """, logger: logger)
            }
        }
    }

    /// Copies listen-submission tokens: a token copied works against the
    /// fleet as it did at home (one per owner; the copy's replaces one the
    /// database already held for that owner). Its sealed `/2.0/` verifier
    /// goes with it (it opens where the key is the same: with sign-in, the
    /// Last.fm API secret); `/2.0/` sessions are not copied: players sign in again.
    public func write(_ tokens: [PersonalData.ListenTokenRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for t in tokens {
                try await connection.query("""
                    INSERT INTO listen_token(owner, token_digest, created_at, mobile_verifier)
                    VALUES (\(t.owner), \(t.tokenDigest), \(t.createdAt), \(t.mobileVerifier))
                    ON CONFLICT (owner) DO UPDATE SET token_digest = EXCLUDED.token_digest, created_at = EXCLUDED.created_at,
                        mobile_verifier = EXCLUDED.mobile_verifier
                    """, logger: logger)
            }
        }
    }

    public func write(_ responses: [PersonalData.ResponseRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for r in responses {
                let expiry = min(r.expiresAt, Date(timeIntervalSince1970: 1e11))
                try await connection.query("""
                    INSERT INTO lastfm_response(key, body, stored_at, expires_at) VALUES (\(r.key), \(ByteBuffer(bytes: r.body)), \(r.storedAt), \(expiry))
                    ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at
                    """, logger: logger)
            }
        }
    }

    /// Where the copy of `person`'s scrobbles stands: the newest instant
    /// already in PostgreSQL (copying resumes there; rows already copied
    /// are skipped by their key).
    public func newestScrobble(of person: Username) async throws -> Int64? {
        let logger = self.logger
        let rows = try await database.client.query("""
            SELECT max(s.instant) FROM archive_user u JOIN scrobble s ON s.user_id = u.id WHERE u.name_key = \(person.key)
            """, logger: logger)
        for try await instant in rows.decode(Int64?.self) { return instant }
        return nil
    }

    /// Copies `rows` of `person` as they are (no duplicate rule: they were
    /// archived once already), in one transaction, skipping rows already
    /// there. Returns how many were new.
    @discardableResult
    public func write(_ rows: [(Scrobble, ScrobbleOrigin)], of person: Username) async throws -> Int {
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            let id = try await PostgresScrobbleStore.ensureUserID(of: person, connection, logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresScrobbleStore.lockKey(id)))", logger: logger)
            return try await PostgresScrobbleStore.insertKeepingExisting(rows, userID: id, connection, logger)
        }
    }

    /// Copies `person`'s unfinished sync and the demo's generation mark.
    public func write(_ person: PersonalData.ArchivedPerson) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            let id = try await PostgresScrobbleStore.ensureUserID(of: person.name, connection, logger)
            if let state = person.pendingSync { try await PostgresScrobbleStore.save(state, userID: id, connection, logger) }
            if let g = person.generated {
                try await connection.query("""
                    INSERT INTO generated_history (user_id, seed, first_week, generated_through) VALUES (\(id), \(g.seed), \(g.firstWeek), \(g.through))
                    ON CONFLICT (user_id) DO UPDATE SET generated_through = GREATEST(generated_history.generated_through, EXCLUDED.generated_through)
                    """, logger: logger)
            }
        }
    }

    /// Copies people's music servers (the copy's replace the database's).
    public func write(_ servers: [PersonalData.MusicServerRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for row in servers {
                let s = row.setting
                try await connection.query("""
                    INSERT INTO music_server(owner, kind, address, username, password, updated_at, keep_years)
                    VALUES (\(row.owner), \(s.kind.rawValue), \(s.address), \(s.username), \(s.password), \(row.updatedAt.timeIntervalSince1970),
                            \(row.keepsYearsAgo.map(Int32.init)))
                    ON CONFLICT (owner) DO UPDATE SET kind = EXCLUDED.kind, address = EXCLUDED.address, username = EXCLUDED.username,
                        password = EXCLUDED.password, updated_at = EXCLUDED.updated_at, keep_years = EXCLUDED.keep_years
                    """, logger: logger)
            }
        }
    }

    /// Copies forwarding choices (the copy's replace what the database held
    /// for the same owner).
    public func write(_ choices: [PersonalData.ForwardingRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for c in choices {
                try await connection.query("""
                    INSERT INTO forwarding(owner, to_lastfm, listenbrainz_token, listenbrainz_user, updated_at)
                    VALUES (\(c.owner), \(c.toLastFM), \(c.listenBrainzToken), \(c.listenBrainzUser), \(c.updatedAt))
                    ON CONFLICT (owner) DO UPDATE SET to_lastfm = EXCLUDED.to_lastfm, listenbrainz_token = EXCLUDED.listenbrainz_token,
                        listenbrainz_user = EXCLUDED.listenbrainz_user, updated_at = EXCLUDED.updated_at
                    """, logger: logger)
            }
        }
    }

    /// Copies people's album choices (the copy's replace the database's),
    /// before their listens, whose charts are counted with them. A person
    /// whose listens are here already and whose choice changes gets their
    /// charts counted again by the job queue.
    public func write(_ foldings: [PersonalData.AlbumFoldingRow], at now: Date = Date()) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for f in foldings {
                var before = AlbumFolding.editions
                for try await folds in try await connection.query("""
                    SELECT folds_editions FROM album_folding WHERE name_key = \(f.nameKey) FOR UPDATE
                    """, logger: logger).decode(Bool.self) {
                    before = AlbumFolding(foldsEditions: folds)
                }
                try await connection.query("""
                    INSERT INTO album_folding(name_key, folds_editions, version) VALUES (\(f.nameKey), \(f.foldsEditions), \(f.version))
                    ON CONFLICT (name_key) DO UPDATE SET folds_editions = EXCLUDED.folds_editions, version = EXCLUDED.version
                    """, logger: logger)
                var archived = false
                for try await _ in try await connection.query("SELECT 1 FROM archive_user WHERE name_key = \(f.nameKey)", logger: logger) {
                    archived = true
                }
                if archived, before.foldsEditions != f.foldsEditions {
                    _ = try await PostgresJobQueue.enqueue(.albumFolding, personKey: f.nameKey, key: f.nameKey, payload: "", machine: nil,
                                                           notBefore: nil, at: now, connection, logger)
                }
            }
        }
    }

    /// Copies people's choices about single albums (for each person the
    /// copy has any for, the copy's replace the database's), before their
    /// listens. A person whose listens are
    /// here already and whose choices change gets every week counted again.
    public func write(_ choices: [PersonalData.AlbumChoiceRow], at now: Date = Date()) async throws {
        let logger = self.logger
        let byPerson = Dictionary(grouping: choices, by: \.nameKey)
        try await database.client.withTransaction(logger: logger) { connection in
            for nameKey in byPerson.keys.sorted() {
                let copied = byPerson[nameKey]!.map(\.choice)
                let before = try await PostgresScrobbleStore.albumChoices(nameKey: nameKey, connection, logger)
                guard before != copied else { continue }
                try await PostgresScrobbleStore.replaceAlbumChoices(copied, nameKey: nameKey, connection, logger)
                var id: Int64?
                for try await found in try await connection.query("SELECT id FROM archive_user WHERE name_key = \(nameKey)", logger: logger)
                    .decode(Int64.self) { id = found }
                if let id { try await PostgresScrobbleStore.queueRecount(userID: id, of: nameKey, albums: nil, at: now, connection, logger) }
            }
        }
    }

    /// Copies weekly digest subscriptions (the copy's replace what the
    /// database held for the same owner), confirmations and links kept.
    public func write(_ subscriptions: [DigestSubscription]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for d in subscriptions {
                let confirmed = d.confirmedAt?.timeIntervalSince1970, updated = d.updatedAt.timeIntervalSince1970
                try await connection.query("""
                    INSERT INTO digest_subscription(owner, address, weekday, hour, years, token, confirmed_at, created_at, updated_at)
                    VALUES (\(d.owner.id), \(d.address), \(Int32(d.weekday)), \(Int32(d.hour)), \(Int32(d.years)), \(d.token), \(confirmed),
                        \(updated), \(updated))
                    ON CONFLICT (owner) DO UPDATE SET address = EXCLUDED.address, weekday = EXCLUDED.weekday, hour = EXCLUDED.hour,
                        years = EXCLUDED.years, token = EXCLUDED.token, confirmed_at = EXCLUDED.confirmed_at, updated_at = EXCLUDED.updated_at
                    """, logger: logger)
            }
        }
    }

    /// Copies rows of the forwarding outbox, so listens not yet forwarded
    /// are forwarded from the fleet (their owners' jobs queued with them);
    /// a listen the database holds already
    /// (same owner, service, time, artist and track) is left as it is.
    public func write(_ rows: [PersonalData.OutboxRow]) async throws {
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            for r in rows {
                let s = r.listen.scrobble
                try await connection.query("""
                    INSERT INTO forward_outbox(owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, duration,
                        state, attempts, uncertain, due_at, reason, received_at, sent_at, album_artist, release_group_mbid)
                    VALUES (\(r.owner), \(Int16(r.target)), \(s.instant), \(s.artist), \(s.track), \(s.album), \(s.artistMBID), \(s.albumMBID),
                        \(s.trackMBID), \(r.listen.duration), \(Int16(r.state)), \(Int32(r.attempts)), \(r.uncertain), \(r.dueAt), \(r.reason),
                        \(r.receivedAt), \(r.sentAt), \(s.albumArtist), \(s.releaseGroupMBID))
                    ON CONFLICT (owner, target, instant, artist, track) DO NOTHING
                    """, logger: logger)
            }
            // What still waits is sent by its owner's job for the service.
            let waiting = rows.filter { $0.state == 0 }
            let jobs = Set(waiting.compactMap { r in ForwardingTarget(rawValue: r.target).map { ForwardingJob(owner: ListOwner(id: r.owner), target: $0) } })
            if let first = waiting.map(\.dueAt).min() { try await PostgresForwardingOutbox.queueJobs(jobs, at: first, connection, logger) }
        }
    }

    /// Rows per table in the destination, by the names `PersonalDataExport.counts()` uses.
    public func counts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (name, table) in [("accounts", "account"), ("list entries", "list_entry"), ("settings", "owner_setting"),
                              ("sessions", "web_session"), ("saved Last.fm answers", "lastfm_response"), ("scrobbles", "scrobble"),
                              ("remembered covers", "album_cover"), ("listen tokens", "listen_token"),
                              ("forwarding choices", "forwarding"), ("listens to forward", "forward_outbox"), ("music servers", "music_server"),
                              ("digest subscriptions", "digest_subscription"), ("album choices", "album_folding"),
                              ("albums kept apart or joined", "album_choice")] {
            for try await n in try await database.client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger).decode(Int64.self) {
                counts[name] = Int(n)
            }
        }
        return counts
    }
}
