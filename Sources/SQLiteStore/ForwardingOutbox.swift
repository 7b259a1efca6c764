import Foundation
import Stores
import GRDB
import VinylogueCore

/// Row states of the outbox, as stored. (1 was "sending", the claim of
/// the outbox's own sender before forwarding moved to the job queue; the
/// migration "forwarding in the job queue" turned those rows back into
/// uncertain waiting ones.)
enum OutboxRowState: Int {
    case waiting = 0, sent = 2, failed = 3
}

/// `ForwardingOutbox` in SQLite (tables `forwarding` and `forward_outbox`,
/// with the owners' `ForwardingJob`s in `job`).
public struct SQLiteForwardingOutbox: ForwardingOutbox {
    let writer: any DatabaseWriter
    /// Listens are queued as they arrive, many at once: their rows share commits.
    let groupCommit: GroupCommit

    public init(_ database: ArchiveDatabase) {
        writer = database.writer
        groupCommit = database.groupCommit
    }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("forwarding outbox") { db in
            try db.execute(sql: """
                CREATE TABLE forwarding (
                    owner INTEGER PRIMARY KEY,
                    to_lastfm INTEGER NOT NULL DEFAULT 0,
                    listenbrainz_token TEXT,
                    listenbrainz_user TEXT,
                    updated_at REAL NOT NULL);
                CREATE TABLE forward_outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner INTEGER NOT NULL,
                    target INTEGER NOT NULL,
                    instant INTEGER NOT NULL,
                    artist TEXT NOT NULL,
                    track TEXT NOT NULL,
                    album TEXT NOT NULL,
                    artist_mbid TEXT,
                    album_mbid TEXT,
                    track_mbid TEXT,
                    duration INTEGER,
                    state INTEGER NOT NULL DEFAULT 0,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    uncertain INTEGER NOT NULL DEFAULT 0,
                    due_at REAL NOT NULL,
                    reason TEXT,
                    received_at REAL NOT NULL,
                    sent_at REAL,
                    UNIQUE (owner, target, instant, artist, track));
                CREATE INDEX forward_outbox_due ON forward_outbox(due_at) WHERE state < 2;
                CREATE INDEX forward_outbox_line ON forward_outbox(owner, target, due_at) WHERE state < 2;
                """)
        }
    }

    /// The outbox's own claims given up to the one job queue: rows a dead
    /// sender held ("sending", its deadline in `due_at`) wait again, due at
    /// once and uncertain (it may have sent them); every owner and service
    /// with listens waiting gets its `ForwardingJob`. Registered after the
    /// job queue.
    static func registerJobQueueMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("forwarding in the job queue") { db in
            try db.execute(sql: "UPDATE forward_outbox SET state = 0, uncertain = 1, due_at = received_at WHERE state = 1")
            try db.execute(sql: """
                INSERT INTO job(kind, person, key, state, not_before, queued_at, updated_at)
                SELECT ?, coalesce(a.name_key, ''), o.owner || '/' || o.target, 'queued', min(o.due_at), min(o.received_at), min(o.received_at)
                FROM forward_outbox o LEFT JOIN account a ON a.id = o.owner
                WHERE o.state = 0 GROUP BY o.owner, o.target
                """, arguments: [JobKind.forwarding.rawValue])
        }
    }

    public func choice(of owner: ListOwner) async throws -> ForwardingChoice {
        try await writer.read { db in try Self.choice(of: owner, in: db) }
    }

    /// `owner`'s choice, read in the caller's transaction.
    static func choice(of owner: ListOwner, in db: Database) throws -> ForwardingChoice {
        var choice = ForwardingChoice()
        // Asked on every listen received: statements kept compiled.
        if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT to_lastfm, listenbrainz_token, listenbrainz_user FROM forwarding WHERE owner = ?"),
                                      arguments: [owner.id]) {
            choice.toLastFM = row["to_lastfm"]
            choice.listenBrainzToken = row["listenbrainz_token"]
            choice.listenBrainzUser = row["listenbrainz_user"]
        }
        if owner != .household,
           let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT name, lastfm_session_key FROM account WHERE id = ?"), arguments: [owner.id]) {
            choice.lastFMSession = (row["name"], row["lastfm_session_key"])
        }
        return choice
    }

    public func setForwardsToLastFM(_ on: Bool, for owner: ListOwner, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO forwarding(owner, to_lastfm, updated_at) VALUES (?, ?, ?)
                ON CONFLICT(owner) DO UPDATE SET to_lastfm = excluded.to_lastfm, updated_at = excluded.updated_at
                """, arguments: [owner.id, on, now.timeIntervalSince1970])
        }
    }

    public func setListenBrainz(token: String?, user: String?, for owner: ListOwner, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO forwarding(owner, listenbrainz_token, listenbrainz_user, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT(owner) DO UPDATE SET listenbrainz_token = excluded.listenbrainz_token,
                    listenbrainz_user = excluded.listenbrainz_user, updated_at = excluded.updated_at
                """, arguments: [owner.id, token, token == nil ? nil : user, now.timeIntervalSince1970])
        }
    }

    public func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at now: Date) async throws -> Int {
        guard !listens.isEmpty, !targets.isEmpty else { return 0 }
        let time = now.timeIntervalSince1970
        return try await groupCommit.write { db in try Self.enqueue(listens, of: owner, to: targets, at: time, in: db) }
    }

    /// Adds outbox rows in the caller's transaction, and queues the job of
    /// each service a row was added for; returns how many were new.
    static func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at time: TimeInterval,
                        in db: Database) throws -> Int {
        guard !listens.isEmpty, !targets.isEmpty else { return 0 }
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO forward_outbox(owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid,
                duration, due_at, received_at, album_artist, release_group_mbid)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var added = 0
        for target in targets.sorted(by: { $0.rawValue < $1.rawValue }) {
            var addedHere = 0
            for listen in listens {
                let s = listen.scrobble
                try statement.execute(arguments: [owner.id, target.rawValue, s.instant, s.artist, s.track, s.album,
                                                  s.artistMBID, s.albumMBID, s.trackMBID, listen.duration, time, time, s.albumArtist,
                                                  s.releaseGroupMBID])
                addedHere += db.changesCount
            }
            if addedHere > 0 { try queueJob(ForwardingJob(owner: owner, target: target), at: time, in: db) }
            added += addedHere
        }
        return added
    }

    /// Queues `job` in the caller's transaction, or brings an unfinished
    /// one's due time forward to `time` (a new listen goes at once, even
    /// while older ones wait out a backoff). A running job is left running:
    /// its last write, which ends it, sees the new rows (`record`). Its
    /// person is the owner's name key (the household's: ""), by which
    /// erasing the account deletes it.
    static func queueJob(_ job: ForwardingJob, at time: TimeInterval, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO job(kind, person, key, state, not_before, queued_at, updated_at)
            VALUES (?, coalesce((SELECT name_key FROM account WHERE id = ?), ''), ?, 'queued', ?, ?, ?)
            ON CONFLICT(kind, key) WHERE state IN ('queued', 'running') DO UPDATE SET not_before = min(not_before, excluded.not_before)
            """).execute(arguments: [JobKind.forwarding.rawValue, job.owner.id, job.key, time, time, time])
    }

    /// A row still "sending" (state 1) was claimed by a sender from before
    /// the job queue (a fleet mid-upgrade): read as uncertain, it is asked
    /// about before it is sent.
    public func due(for job: ForwardingJob, at now: Date, limit: Int) async throws -> [OutboxListen] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, album_artist, release_group_mbid, duration, attempts,
                    (uncertain OR state = 1) AS uncertain
                FROM forward_outbox INDEXED BY forward_outbox_line
                WHERE owner = ? AND target = ? AND state < 2 AND due_at <= ?
                ORDER BY instant, id LIMIT ?
                """, arguments: [job.owner.id, job.target.rawValue, now.timeIntervalSince1970, max(1, limit)]).map { row in
                OutboxListen(id: row["id"], listen: Self.listen(row), attempts: row["attempts"], uncertain: row["uncertain"])
            }
        }
    }

    public func record(_ marks: OutboxMarks, for job: ForwardingJob, under claim: JobClaim, at now: Date) async throws -> JobEnding? {
        let time = now.timeIntervalSince1970
        return try await writer.write { db in
            try SQLiteScrobbleStore.hold(claim.fence, in: db)
            try Self.update(marks.sent, set: "state = 2, sent_at = ?, reason = NULL, uncertain = 0", [time], in: db)
            try Self.update(marks.sending, set: "uncertain = 1", [], in: db)
            for w in marks.waiting {
                try Self.update(w.ids, set: "state = 0, attempts = attempts + 1, due_at = ?, reason = ?, uncertain = coalesce(?, uncertain)",
                                [w.due.timeIntervalSince1970, w.reason, w.uncertain], in: db)
            }
            for f in marks.failed {
                try Self.update(f.ids, set: "state = 3, attempts = attempts + 1, reason = ?, uncertain = coalesce(?, uncertain)",
                                [f.reason, f.uncertain], in: db)
            }
            // A send follows: the job goes on.
            guard marks.sending.isEmpty else { return nil }
            let next = try Double.fetchOne(db, sql: """
                SELECT min(due_at) FROM forward_outbox INDEXED BY forward_outbox_line WHERE owner = ? AND target = ? AND state < 2
                """, arguments: [job.owner.id, job.target.rawValue])
            if let next, next <= time { return nil }
            let ending = ForwardingJob.ending(nextDue: next.map(Date.init(timeIntervalSince1970:)))
            // The rows say what was sent: an owner's earlier ended jobs for
            // this service are kept no longer than this one ends.
            try db.execute(sql: "DELETE FROM job WHERE person = ? AND kind = ? AND key = ? AND state IN ('done', 'failed') AND id <> ?",
                           arguments: [claim.job.person, JobKind.forwarding.rawValue, job.key, claim.job.id])
            try SQLiteJobQueue.end(claim, as: ending, at: now, in: db)
            return ending
        }
    }

    static func listen(_ row: Row) -> ListenToForward {
        ListenToForward(scrobble: Scrobble(instant: row["instant"], artist: row["artist"], album: row["album"], track: row["track"],
                                           artistMBID: row["artist_mbid"], albumMBID: row["album_mbid"], trackMBID: row["track_mbid"],
                                           albumArtist: row["album_artist"], releaseGroupMBID: row["release_group_mbid"]),
                        duration: row["duration"])
    }

    /// Sets `assignments` (with `values` bound first) on the rows `ids`, in the caller's transaction.
    private static func update(_ ids: [Int64], set assignments: String, _ values: [(any DatabaseValueConvertible)?], in db: Database) throws {
        guard !ids.isEmpty else { return }
        let values = values.map { $0?.databaseValue ?? .null }
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
            try db.execute(sql: "UPDATE forward_outbox SET \(assignments) WHERE id IN (\(databaseQuestionMarks(count: chunk.count)))",
                           arguments: StatementArguments(values + chunk.map(\.databaseValue)))
        }
    }

    public func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int {
        let time = now.timeIntervalSince1970
        return try await writer.write { db in
            try db.execute(sql: "UPDATE forward_outbox SET state = 0, attempts = 0, due_at = ? WHERE owner = ? AND target = ? AND state = 3",
                           arguments: [time, owner.id, target.rawValue])
            let again = db.changesCount
            if again > 0 { try Self.queueJob(ForwardingJob(owner: owner, target: target), at: time, in: db) }
            return again
        }
    }

    public func nextDue() async throws -> Date? {
        try await writer.read { db in
            try Double.fetchOne(db, sql: "SELECT min(due_at) FROM forward_outbox WHERE state < 2").map(Date.init(timeIntervalSince1970:))
        }
    }

    public func states(of owner: ListOwner) async throws -> [ForwardingTarget: ForwardingState] {
        try await writer.read { db in
            var states: [ForwardingTarget: ForwardingState] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT target, state, count(*) AS n, max(sent_at) AS last FROM forward_outbox WHERE owner = ? GROUP BY target, state
                """, arguments: [owner.id]) {
                guard let target = ForwardingTarget(rawValue: row["target"]) else { continue }
                var state = states[target] ?? ForwardingState()
                let count: Int = row["n"]
                switch OutboxRowState(rawValue: row["state"]) {
                case .sent?:
                    state.sent += count
                    state.lastSent = (row["last"] as Double?).map(Date.init(timeIntervalSince1970:))
                case .failed?: state.failed += count
                default: state.waiting += count
                }
                states[target] = state
            }
            for target in states.keys {
                states[target]?.problem = try String.fetchOne(db, sql: """
                    SELECT reason FROM forward_outbox WHERE owner = ? AND target = ? AND state IN (0, 3) AND reason IS NOT NULL
                    ORDER BY id DESC LIMIT 1
                    """, arguments: [owner.id, target.rawValue])
            }
            return states
        }
    }
}
