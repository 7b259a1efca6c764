import Foundation
import Stores
import GRDB
import VinylogueCore

/// Row states of the outbox, as stored.
enum OutboxRowState: Int {
    case waiting = 0, sending = 1, sent = 2, failed = 3
}

/// `ForwardingOutbox` in SQLite (tables `forwarding` and `forward_outbox`).
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

    /// Adds outbox rows in the caller's transaction; returns how many were new.
    static func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at time: TimeInterval,
                        in db: Database) throws -> Int {
        guard !listens.isEmpty, !targets.isEmpty else { return 0 }
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO forward_outbox(owner, target, instant, artist, track, album, artist_mbid, album_mbid, track_mbid,
                duration, due_at, received_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var added = 0
        for target in targets.sorted(by: { $0.rawValue < $1.rawValue }) {
            for listen in listens {
                let s = listen.scrobble
                try statement.execute(arguments: [owner.id, target.rawValue, s.instant, s.artist, s.track, s.album,
                                                  s.artistMBID, s.albumMBID, s.trackMBID, listen.duration, time, time])
                added += db.changesCount
            }
        }
        return added
    }

    public func claim(at now: Date, lease: TimeInterval, limit: @Sendable (ForwardingTarget) -> Int) async throws -> OutboxBatch? {
        let time = now.timeIntervalSince1970
        return try await writer.write { db in
            guard let head = try Row.fetchOne(db, sql: """
                SELECT owner, target FROM forward_outbox WHERE state < 2 AND due_at <= ? ORDER BY due_at, id LIMIT 1
                """, arguments: [time]),
                  let target = ForwardingTarget(rawValue: head["target"]) else { return nil }
            let owner: Int64 = head["owner"]
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, state, instant, artist, track, album, artist_mbid, album_mbid, track_mbid, duration, attempts, uncertain
                FROM forward_outbox INDEXED BY forward_outbox_line
                WHERE owner = ? AND target = ? AND state < 2 AND due_at <= ?
                ORDER BY instant, id LIMIT ?
                """, arguments: [owner, target.rawValue, time, max(1, limit(target))])
            var listens: [OutboxListen] = []
            listens.reserveCapacity(rows.count)
            for row in rows {
                // A row still "sending" past its deadline was claimed by a
                // sender that stopped: it may have arrived.
                let orphaned = (row["state"] as Int) == OutboxRowState.sending.rawValue
                listens.append(OutboxListen(id: row["id"], listen: Self.listen(row), attempts: row["attempts"],
                                            uncertain: row["uncertain"] || orphaned))
            }
            let ids = listens.map(\.id)
            try db.execute(sql: """
                UPDATE forward_outbox SET uncertain = (uncertain OR state = 1), state = 1, due_at = ?
                WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments([time + lease] + ids.map { $0 as (any DatabaseValueConvertible) }))
            listens.sort { ($0.listen.scrobble.instant, $0.id) < ($1.listen.scrobble.instant, $1.id) }
            return OutboxBatch(owner: ListOwner(id: owner), target: target, listens: listens)
        }
    }

    static func listen(_ row: Row) -> ListenToForward {
        ListenToForward(scrobble: Scrobble(instant: row["instant"], artist: row["artist"], album: row["album"], track: row["track"],
                                           artistMBID: row["artist_mbid"], albumMBID: row["album_mbid"], trackMBID: row["track_mbid"]),
                        duration: row["duration"])
    }

    public func markSent(_ ids: [Int64], at now: Date) async throws {
        try await update(ids, set: "state = 2, sent_at = ?, reason = NULL, uncertain = 0", [now.timeIntervalSince1970])
    }

    public func markWaiting(_ ids: [Int64], until due: Date, reason: String, uncertain: Bool) async throws {
        try await update(ids, set: "state = 0, attempts = attempts + 1, due_at = ?, reason = ?, uncertain = (uncertain OR ?)",
                         [due.timeIntervalSince1970, reason, uncertain])
    }

    public func markCertain(_ ids: [Int64]) async throws {
        try await update(ids, set: "uncertain = 0", [])
    }

    public func markFailed(_ ids: [Int64], reason: String, at now: Date) async throws {
        try await update(ids, set: "state = 3, attempts = attempts + 1, reason = ?", [reason])
    }

    private func update(_ ids: [Int64], set assignments: String, _ values: [(any DatabaseValueConvertible)?]) async throws {
        guard !ids.isEmpty else { return }
        let values = values.map { $0?.databaseValue ?? .null }
        try await writer.write { db in
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
                try db.execute(sql: "UPDATE forward_outbox SET \(assignments) WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                               arguments: StatementArguments(values + chunk.map(\.databaseValue)))
            }
        }
    }

    public func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: "UPDATE forward_outbox SET state = 0, attempts = 0, due_at = ? WHERE owner = ? AND target = ? AND state = 3",
                           arguments: [now.timeIntervalSince1970, owner.id, target.rawValue])
            return db.changesCount
        }
    }

    public func releaseOrphanedClaims() async throws {
        // One process serves a data directory: a claim still standing when
        // it starts was left by its previous life, which may have sent it.
        try await writer.write { db in
            try db.execute(sql: "UPDATE forward_outbox SET state = 0, uncertain = 1, due_at = 0 WHERE state = 1")
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
                    SELECT reason FROM forward_outbox WHERE owner = ? AND target = ? AND state IN (0, 1, 3) AND reason IS NOT NULL
                    ORDER BY id DESC LIMIT 1
                    """, arguments: [owner.id, target.rawValue])
            }
            return states
        }
    }
}
