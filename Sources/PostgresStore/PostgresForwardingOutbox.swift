import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `ForwardingOutbox` in PostgreSQL: every instance of a fleet sends from
/// one outbox. Who sends an owner's listens to a service is the one job
/// queue's (`ForwardingJob`): one instance at a time holds the job, and
/// one that dies leaves it to be taken over, its listens uncertain.
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

    /// The outbox's own claims given up to the one job queue (see
    /// `SQLiteForwardingOutbox.registerJobQueueMigration`): rows a dead
    /// sender held ("sending", state 1, its deadline in `due_at`) wait
    /// again, due at once and uncertain; every owner and service with
    /// listens waiting gets its `ForwardingJob`.
    static let movedToJobQueue = [
        "UPDATE forward_outbox SET state = 0, uncertain = true, due_at = received_at WHERE state = 1",
        """
        INSERT INTO job(kind, person, key, state, not_before, queued_at, updated_at)
        SELECT '\(JobKind.forwarding.rawValue)', coalesce(min(a.name_key), ''), o.owner || '/' || o.target, 'queued',
            extract(epoch FROM min(o.due_at)), extract(epoch FROM min(o.received_at)), extract(epoch FROM min(o.received_at))
        FROM forward_outbox o LEFT JOIN account a ON a.id = o.owner
        WHERE o.state = 0 GROUP BY o.owner, o.target
        """,
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
        guard !listens.isEmpty, !targets.isEmpty else { return 0 }
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            try await Self.queueJobs(Set(targets.map { ForwardingJob(owner: owner, target: $0) }), at: now, connection, logger)
            return try await Self.enqueue([(listens, owner, targets)], at: now, connection, logger)[0]
        }
    }

    /// Adds each entry's listens for its owner and targets to the outbox,
    /// all in one statement (their jobs are the caller's: `queueJobs`);
    /// returns how many rows each entry added (a row two entries of one
    /// owner both sent counts for the first).
    static func enqueue(_ entries: [(listens: [ListenToForward], owner: ListOwner, targets: Set<ForwardingTarget>)], at now: Date,
                        _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int] {
        var added = [Int](repeating: 0, count: entries.count)
        // Arrays bound whole; a missing id or length travels as "" or -1.
        var owners: [Int64] = [], codes: [Int16] = [], instants: [Int64] = [], artists: [String] = [], tracks: [String] = []
        var albums: [String] = [], artistIDs: [String] = [], albumIDs: [String] = [], trackIDs: [String] = [], durations: [Int64] = []
        var albumArtists: [String] = [], groupIDs: [String] = []
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
                    albumArtists.append(listen.scrobble.albumArtist ?? "")
                    groupIDs.append(listen.scrobble.releaseGroupMBID ?? "")
                    durations.append(listen.duration ?? -1)
                }
            }
        }
        guard !owners.isEmpty else { return added }
        let rows = try await connection.query("""
            INSERT INTO forward_outbox(owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid,
                duration, due_at, received_at, album_artist, release_group_mbid)
            SELECT o, c, i, a, t, al, NULLIF(ai, ''), NULLIF(ali, ''), NULLIF(ti, ''), NULLIF(d, -1), \(now), \(now), NULLIF(aa, ''),
                NULLIF(gi, '')
            FROM unnest(\(owners)::bigint[], \(codes)::smallint[], \(instants)::bigint[], \(artists)::text[], \(tracks)::text[],
                        \(albums)::text[], \(artistIDs)::text[], \(albumIDs)::text[], \(trackIDs)::text[], \(durations)::bigint[],
                        \(albumArtists)::text[], \(groupIDs)::text[])
                AS l(o, c, i, a, t, al, ai, ali, ti, d, aa, gi)
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

    /// The owners' `ForwardingJob`s queued on `connection`, in the caller's
    /// transaction, in one statement, or their due times brought forward
    /// to `now` (a new listen goes at once, even while older ones wait out
    /// a backoff). A running job is left running: its last write, which
    /// ends it, waits for this row lock and then sees the new rows
    /// (`record`); one that ended first leaves no unfinished row, and a
    /// new job is queued. Callers queue jobs before they take the people's
    /// archive locks: the order the eraser and the fenced writes take them.
    /// Each job's person is its owner's name key (the household's: ""), by
    /// which erasing the account deletes it.
    static func queueJobs(_ jobs: Set<ForwardingJob>, at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !jobs.isEmpty else { return }
        // In key order: two writers lock the same rows in the same order.
        let sorted = jobs.sorted { $0.key < $1.key }
        let time = now.timeIntervalSince1970
        try await connection.query("""
            INSERT INTO job(kind, person, key, state, not_before, queued_at, updated_at)
            SELECT \(JobKind.forwarding.rawValue), coalesce(a.name_key, ''), j.key, 'queued', \(time), \(time), \(time)
            FROM unnest(\(sorted.map(\.owner.id))::bigint[], \(sorted.map(\.key))::text[]) WITH ORDINALITY AS j(owner, key, n)
            LEFT JOIN account a ON a.id = j.owner
            ORDER BY j.n
            ON CONFLICT (kind, key) WHERE state IN ('queued', 'running') DO UPDATE SET not_before = LEAST(job.not_before, EXCLUDED.not_before)
            """, logger: logger)
    }

    /// A row still "sending" (state 1) was claimed by an instance from
    /// before the job queue (a fleet mid-upgrade): read as uncertain, it is
    /// asked about before it is sent.
    public func due(for job: ForwardingJob, at now: Date, limit: Int) async throws -> [OutboxListen] {
        let rows = try await database.client.query("""
            SELECT id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, duration, attempts, uncertain OR state = 1,
                album_artist, release_group_mbid
            FROM forward_outbox WHERE owner = \(job.owner.id) AND target = \(Int16(job.target.rawValue)) AND state < 2 AND due_at <= \(now)
            ORDER BY instant, id LIMIT \(max(1, limit))
            """, logger: logger)
        var listens: [OutboxListen] = []
        for try await (id, instant, artist, track, album, artistID, albumID, trackID, duration, attempts, uncertain, albumArtist, groupID)
            in rows.decode((Int64, Int64, String, String, String, String?, String?, String?, Int64?, Int32, Bool, String?, String?).self) {
            let scrobble = Scrobble(instant: instant, artist: artist, album: album, track: track, artistMBID: artistID, albumMBID: albumID,
                                    trackMBID: trackID, albumArtist: albumArtist, releaseGroupMBID: groupID)
            listens.append(OutboxListen(id: id, listen: ListenToForward(scrobble: scrobble, duration: duration),
                                        attempts: Int(attempts), uncertain: uncertain))
        }
        return listens
    }

    public func record(_ marks: OutboxMarks, for job: ForwardingJob, under claim: JobClaim, at now: Date) async throws -> JobEnding? {
        let logger = self.logger
        do {
            return try await write(marks, for: job, under: claim, at: now, logger)
        } catch let error as PostgresTransactionError where error.closureError is SourceError && error.rollbackError == nil {
            // Fenced: the job is gone or another's; rolled back, as it should be.
            throw error.closureError as! SourceError
        }
    }

    /// `record`'s transaction.
    private func write(_ marks: OutboxMarks, for job: ForwardingJob, under claim: JobClaim, at now: Date, _ logger: Logger) async throws -> JobEnding? {
        try await database.client.withTransaction(logger: logger) { connection -> JobEnding? in
            // The job's row locked first, as the eraser and new listens lock it.
            try await PostgresScrobbleStore.hold(claim.fence, connection, logger, exclusively: true)
            if !marks.sent.isEmpty {
                try await connection.query("""
                    UPDATE forward_outbox SET state = 2, sent_at = \(now), reason = NULL, uncertain = false WHERE id = ANY(\(marks.sent))
                    """, logger: logger)
            }
            if !marks.sending.isEmpty {
                try await connection.query("UPDATE forward_outbox SET uncertain = true WHERE id = ANY(\(marks.sending))", logger: logger)
            }
            for w in marks.waiting where !w.ids.isEmpty {
                try await connection.query("""
                    UPDATE forward_outbox SET state = 0, attempts = attempts + 1, due_at = \(w.due), reason = \(w.reason),
                        uncertain = coalesce(\(w.uncertain), uncertain) WHERE id = ANY(\(w.ids))
                    """, logger: logger)
            }
            for f in marks.failed where !f.ids.isEmpty {
                try await connection.query("""
                    UPDATE forward_outbox SET state = 3, attempts = attempts + 1, reason = \(f.reason),
                        uncertain = coalesce(\(f.uncertain), uncertain) WHERE id = ANY(\(f.ids))
                    """, logger: logger)
            }
            // A send follows: the job goes on.
            guard marks.sending.isEmpty else { return nil }
            var next: Date?
            for try await due in try await connection.query("""
                SELECT min(due_at) FROM forward_outbox WHERE owner = \(job.owner.id) AND target = \(Int16(job.target.rawValue)) AND state < 2
                """, logger: logger).decode(Date?.self) { next = due }
            if let next, next <= now { return nil }
            let ending = ForwardingJob.ending(nextDue: next)
            // The rows say what was sent: an owner's earlier ended jobs for
            // this service are kept no longer than this one ends.
            try await connection.query("""
                DELETE FROM job WHERE person = \(claim.job.person) AND kind = \(JobKind.forwarding.rawValue) AND key = \(job.key)
                    AND state IN ('done', 'failed') AND id <> \(claim.job.id)
                """, logger: logger)
            try await PostgresJobQueue.end(claim, as: ending, at: now, connection, logger)
            return ending
        }
    }

    public func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int {
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            // The job first, in the order a send's own writes lock them.
            try await Self.queueJobs([ForwardingJob(owner: owner, target: target)], at: now, connection, logger)
            let rows = try await connection.query("""
                WITH again AS (UPDATE forward_outbox SET state = 0, attempts = 0, due_at = \(now)
                    WHERE owner = \(owner.id) AND target = \(Int16(target.rawValue)) AND state = 3 RETURNING 1)
                SELECT count(*) FROM again
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

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
                    AND state IN (0, 3) AND reason IS NOT NULL ORDER BY id DESC LIMIT 1
                """, logger: logger)
            for try await reason in reasons.decode(String.self) { states[target]?.problem = reason }
        }
        return states
    }
}
