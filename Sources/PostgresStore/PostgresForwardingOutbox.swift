import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `ForwardingOutbox` in PostgreSQL: every instance of a fleet sends from
/// one outbox. A claim takes its rows with `FOR UPDATE SKIP LOCKED`, so two
/// instances never claim the same listen, and an instance that dies leaves
/// its claim to expire at its deadline, when another takes it (uncertain).
public struct PostgresForwardingOutbox: ForwardingOutbox {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    static let tables = [
        """
        CREATE TABLE forwarding (
            owner BIGINT PRIMARY KEY,
            to_lastfm BOOLEAN NOT NULL DEFAULT false,
            listenbrainz_token TEXT,
            listenbrainz_user TEXT,
            updated_at TIMESTAMPTZ NOT NULL)
        """,
        """
        CREATE TABLE forward_outbox (
            id BIGSERIAL PRIMARY KEY,
            owner BIGINT NOT NULL,
            target SMALLINT NOT NULL,
            instant BIGINT NOT NULL,
            artist TEXT NOT NULL,
            track TEXT NOT NULL,
            album TEXT NOT NULL,
            artist_mbid TEXT,
            album_mbid TEXT,
            track_mbid TEXT,
            duration BIGINT,
            state SMALLINT NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            uncertain BOOLEAN NOT NULL DEFAULT false,
            due_at TIMESTAMPTZ NOT NULL,
            reason TEXT,
            received_at TIMESTAMPTZ NOT NULL,
            sent_at TIMESTAMPTZ,
            UNIQUE (owner, target, instant, artist, track))
        """,
        "CREATE INDEX forward_outbox_due ON forward_outbox(due_at) WHERE state < 2",
        "CREATE INDEX forward_outbox_line ON forward_outbox(owner, target, due_at) WHERE state < 2",
    ]

    public func choice(of owner: ListOwner) async throws -> ForwardingChoice {
        let logger = self.logger
        return try await database.client.withConnection { connection in try await Self.choice(of: owner, connection, logger) }
    }

    /// `owner`'s forwarding choice, read on `connection` (in the caller's
    /// transaction, when it has one).
    static func choice(of owner: ListOwner, _ connection: PostgresConnection, _ logger: Logger) async throws -> ForwardingChoice {
        try await choices(of: [owner], connection, logger)[owner] ?? ForwardingChoice()
    }

    /// The forwarding choices of `owners`, with each account's Last.fm
    /// session: one query.
    static func choices(of owners: Set<ListOwner>, _ connection: PostgresConnection, _ logger: Logger) async throws -> [ListOwner: ForwardingChoice] {
        var choices: [ListOwner: ForwardingChoice] = [:]
        guard !owners.isEmpty else { return choices }
        let rows = try await connection.query("""
            SELECT o.id, f.to_lastfm, f.listenbrainz_token, f.listenbrainz_user, a.name, a.lastfm_session_key
            FROM unnest(\(owners.map(\.id))::bigint[]) AS o(id)
            LEFT JOIN forwarding f ON f.owner = o.id
            LEFT JOIN account a ON a.id = o.id AND o.id <> \(ListOwner.household.id)
            """, logger: logger)
        for try await (id, toLastFM, token, user, name, key) in rows.decode((Int64, Bool?, String?, String?, String?, String?).self) {
            var choice = ForwardingChoice(toLastFM: toLastFM ?? false, listenBrainzToken: token, listenBrainzUser: user)
            if let name, let key { choice.lastFMSession = (name, key) }
            choices[ListOwner(id: id)] = choice
        }
        return choices
    }

    public func setForwardsToLastFM(_ on: Bool, for owner: ListOwner, at now: Date) async throws {
        try await database.client.query("""
            INSERT INTO forwarding(owner, to_lastfm, updated_at) VALUES (\(owner.id), \(on), \(now))
            ON CONFLICT (owner) DO UPDATE SET to_lastfm = EXCLUDED.to_lastfm, updated_at = EXCLUDED.updated_at
            """, logger: logger)
    }

    public func setListenBrainz(token: String?, user: String?, for owner: ListOwner, at now: Date) async throws {
        let user = token == nil ? nil : user
        try await database.client.query("""
            INSERT INTO forwarding(owner, listenbrainz_token, listenbrainz_user, updated_at) VALUES (\(owner.id), \(token), \(user), \(now))
            ON CONFLICT (owner) DO UPDATE SET listenbrainz_token = EXCLUDED.listenbrainz_token,
                listenbrainz_user = EXCLUDED.listenbrainz_user, updated_at = EXCLUDED.updated_at
            """, logger: logger)
    }

    public func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at now: Date) async throws -> Int {
        let logger = self.logger
        return try await database.client.withConnection { connection in
            try await Self.enqueue(listens, of: owner, to: targets, at: now, connection, logger)
        }
    }

    /// Queues `listens` on `connection` (in the caller's transaction, when
    /// it has one); returns how many rows were added.
    static func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at now: Date,
                        _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        try await enqueue([(listens, owner, targets)], at: now, connection, logger)[0]
    }

    /// Queues each entry's listens for its owner and targets, all in one
    /// statement; returns how many rows each entry added (a row two entries
    /// of one owner both sent counts for the first).
    static func enqueue(_ entries: [(listens: [ListenToForward], owner: ListOwner, targets: Set<ForwardingTarget>)], at now: Date,
                        _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int] {
        var added = [Int](repeating: 0, count: entries.count)
        // Arrays bound whole; a missing id or length travels as "" or -1.
        var owners: [Int64] = [], codes: [Int16] = [], instants: [Int64] = [], artists: [String] = [], tracks: [String] = []
        var albums: [String] = [], artistIDs: [String] = [], albumIDs: [String] = [], trackIDs: [String] = [], durations: [Int64] = []
        for entry in entries {
            for target in entry.targets.sorted(by: { $0.rawValue < $1.rawValue }) {
                for listen in entry.listens {
                    owners.append(entry.owner.id)
                    codes.append(Int16(target.rawValue))
                    instants.append(listen.scrobble.instant)
                    artists.append(listen.scrobble.artist)
                    tracks.append(listen.scrobble.track)
                    albums.append(listen.scrobble.album)
                    artistIDs.append(listen.scrobble.artistMBID ?? "")
                    albumIDs.append(listen.scrobble.albumMBID ?? "")
                    trackIDs.append(listen.scrobble.trackMBID ?? "")
                    durations.append(listen.duration ?? -1)
                }
            }
        }
        guard !owners.isEmpty else { return added }
        let rows = try await connection.query("""
            INSERT INTO forward_outbox(owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid,
                duration, due_at, received_at)
            SELECT o, c, i, a, t, al, NULLIF(ai, ''), NULLIF(ali, ''), NULLIF(ti, ''), NULLIF(d, -1), \(now), \(now)
            FROM unnest(\(owners)::bigint[], \(codes)::smallint[], \(instants)::bigint[], \(artists)::text[], \(tracks)::text[],
                        \(albums)::text[], \(artistIDs)::text[], \(albumIDs)::text[], \(trackIDs)::text[], \(durations)::bigint[])
                AS l(o, c, i, a, t, al, ai, ali, ti, d)
            ON CONFLICT DO NOTHING RETURNING owner, target, instant, artist, track
            """, logger: logger)
        struct Key: Hashable { let owner: Int64, target: Int16, instant: Int64, artist: String, track: String }
        var inserted = Set<Key>()
        for try await (owner, target, instant, artist, track) in rows.decode((Int64, Int16, Int64, String, String).self) {
            inserted.insert(Key(owner: owner, target: target, instant: instant, artist: artist, track: track))
        }
        for (n, entry) in entries.enumerated() {
            for target in entry.targets {
                let keys = Set(entry.listens.map {
                    Key(owner: entry.owner.id, target: Int16(target.rawValue), instant: $0.scrobble.instant, artist: $0.scrobble.artist,
                        track: $0.scrobble.track)
                })
                let theirs = keys.intersection(inserted)
                inserted.subtract(theirs)
                added[n] += theirs.count
            }
        }
        return added
    }

    public func claim(at now: Date, lease: TimeInterval, limit: @Sendable (ForwardingTarget) -> Int) async throws -> OutboxBatch? {
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection -> OutboxBatch? in
            var head: (Int64, Int16)?
            let heads = try await connection.query("""
                SELECT owner, target FROM forward_outbox WHERE state < 2 AND due_at <= \(now) ORDER BY due_at, id LIMIT 1
                FOR UPDATE SKIP LOCKED
                """, logger: logger)
            for try await row in heads.decode((Int64, Int16).self) { head = row }
            guard let (owner, code) = head, let target = ForwardingTarget(rawValue: Int(code)) else { return nil }
            let count = max(1, limit(target))
            let until = now.addingTimeInterval(lease)
            let rows = try await connection.query("""
                WITH line AS (
                    SELECT id FROM forward_outbox WHERE owner = \(owner) AND target = \(code) AND state < 2 AND due_at <= \(now)
                    ORDER BY instant, id LIMIT \(count) FOR UPDATE SKIP LOCKED)
                UPDATE forward_outbox o SET uncertain = (o.uncertain OR o.state = 1), state = 1, due_at = \(until)
                FROM line WHERE o.id = line.id
                RETURNING o.id, o.instant, o.artist, o.track, o.album, o.artist_mbid, o.album_mbid, o.track_mbid, o.duration,
                    o.attempts, o.uncertain
                """, logger: logger)
            var listens: [OutboxListen] = []
            for try await (id, instant, artist, track, album, artistID, albumID, trackID, duration, attempts, uncertain)
                in rows.decode((Int64, Int64, String, String, String, String?, String?, String?, Int64?, Int32, Bool).self) {
                let scrobble = Scrobble(instant: instant, artist: artist, album: album, track: track,
                                        artistMBID: artistID, albumMBID: albumID, trackMBID: trackID)
                listens.append(OutboxListen(id: id, listen: ListenToForward(scrobble: scrobble, duration: duration),
                                            attempts: Int(attempts), uncertain: uncertain))
            }
            guard !listens.isEmpty else { return nil }
            listens.sort { ($0.listen.scrobble.instant, $0.id) < ($1.listen.scrobble.instant, $1.id) }
            return OutboxBatch(owner: owner == 0 ? .household : .account(owner), target: target, listens: listens)
        }
    }

    public func markSent(_ ids: [Int64], at now: Date) async throws {
        guard !ids.isEmpty else { return }
        try await database.client.query("""
            UPDATE forward_outbox SET state = 2, sent_at = \(now), reason = NULL, uncertain = false WHERE id = ANY(\(ids))
            """, logger: logger)
    }

    public func markWaiting(_ ids: [Int64], until due: Date, reason: String, uncertain: Bool) async throws {
        guard !ids.isEmpty else { return }
        try await database.client.query("""
            UPDATE forward_outbox SET state = 0, attempts = attempts + 1, due_at = \(due), reason = \(reason),
                uncertain = (uncertain OR \(uncertain)) WHERE id = ANY(\(ids))
            """, logger: logger)
    }

    public func markCertain(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await database.client.query("UPDATE forward_outbox SET uncertain = false WHERE id = ANY(\(ids))", logger: logger)
    }

    public func markFailed(_ ids: [Int64], reason: String, at now: Date) async throws {
        guard !ids.isEmpty else { return }
        try await database.client.query("""
            UPDATE forward_outbox SET state = 3, attempts = attempts + 1, reason = \(reason) WHERE id = ANY(\(ids))
            """, logger: logger)
    }

    public func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int {
        let rows = try await database.client.query("""
            WITH again AS (UPDATE forward_outbox SET state = 0, attempts = 0, due_at = \(now)
                WHERE owner = \(owner.id) AND target = \(Int16(target.rawValue)) AND state = 3 RETURNING 1)
            SELECT count(*) FROM again
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Nothing: other instances may hold claims; a dead one's expire.
    public func releaseOrphanedClaims() async throws {}

    public func nextDue() async throws -> Date? {
        let rows = try await database.client.query("SELECT min(due_at) FROM forward_outbox WHERE state < 2", logger: logger)
        for try await due in rows.decode(Date?.self) { return due }
        return nil
    }

    public func states(of owner: ListOwner) async throws -> [ForwardingTarget: ForwardingState] {
        var states: [ForwardingTarget: ForwardingState] = [:]
        let rows = try await database.client.query("""
            SELECT target, state, count(*), max(sent_at) FROM forward_outbox WHERE owner = \(owner.id) GROUP BY target, state
            """, logger: logger)
        for try await (code, state, count, last) in rows.decode((Int16, Int16, Int64, Date?).self) {
            guard let target = ForwardingTarget(rawValue: Int(code)) else { continue }
            var current = states[target] ?? ForwardingState()
            switch state {
            case 2:
                current.sent += Int(count)
                current.lastSent = last
            case 3: current.failed += Int(count)
            default: current.waiting += Int(count)
            }
            states[target] = current
        }
        for target in states.keys {
            let reasons = try await database.client.query("""
                SELECT reason FROM forward_outbox WHERE owner = \(owner.id) AND target = \(Int16(target.rawValue))
                    AND state IN (0, 1, 3) AND reason IS NOT NULL ORDER BY id DESC LIMIT 1
                """, logger: logger)
            for try await reason in reasons.decode(String.self) { states[target]?.problem = reason }
        }
        return states
    }
}
