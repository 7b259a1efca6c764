import Foundation
import GRDB
import VinylogueCore

/// A service received listens can be forwarded to.
public enum ForwardingTarget: Int, Sendable, Hashable, CaseIterable, Codable {
    case lastFM = 1
    case listenBrainz = 2

    /// Its name as people know it.
    public var name: String {
        switch self {
        case .lastFM: "Last.fm"
        case .listenBrainz: "ListenBrainz"
        }
    }
}

/// A listen to forward: the scrobble as received, and the track's length
/// when the player said.
public struct ListenToForward: Sendable, Hashable {
    public let scrobble: Scrobble
    /// Seconds.
    public let duration: Int64?

    public init(scrobble: Scrobble, duration: Int64?) {
        self.scrobble = scrobble
        self.duration = duration
    }
}

/// One row of the outbox, as a sender claims it.
public struct OutboxListen: Sendable, Hashable {
    public let id: Int64
    public let listen: ListenToForward
    /// How many sends were tried before.
    public let attempts: Int
    /// Whether an earlier send may have reached the service without this
    /// side knowing (a timeout, a cut connection, a sender killed mid-send):
    /// the sender asks the service before sending it again.
    public let uncertain: Bool

    public init(id: Int64, listen: ListenToForward, attempts: Int, uncertain: Bool) {
        self.id = id
        self.listen = listen
        self.attempts = attempts
        self.uncertain = uncertain
    }
}

/// Listens of one owner for one service, claimed together for one send.
public struct OutboxBatch: Sendable, Hashable {
    public let owner: ListOwner
    public let target: ForwardingTarget
    /// In time order.
    public let listens: [OutboxListen]

    public init(owner: ListOwner, target: ForwardingTarget, listens: [OutboxListen]) {
        self.owner = owner
        self.target = target
        self.listens = listens
    }
}

/// Where an owner forwards what it receives, and the credentials to do it.
public struct ForwardingChoice: Sendable, Hashable {
    /// Forward to Last.fm with the session from signing in (accounts only).
    public var toLastFM: Bool
    /// The ListenBrainz user token the person entered; nil: no forwarding
    /// there. A secret: never shown, logged or sent anywhere but ListenBrainz.
    public var listenBrainzToken: String?
    /// The ListenBrainz name that token belongs to (ListenBrainz said so
    /// when it was entered).
    public var listenBrainzUser: String?
    /// The account's Last.fm name and session key, when the owner is an
    /// account (read from the account, not kept twice).
    public var lastFMSession: (name: String, key: String)?

    public init(toLastFM: Bool = false, listenBrainzToken: String? = nil, listenBrainzUser: String? = nil,
                lastFMSession: (name: String, key: String)? = nil) {
        self.toLastFM = toLastFM
        self.listenBrainzToken = listenBrainzToken
        self.listenBrainzUser = listenBrainzUser
        self.lastFMSession = lastFMSession
    }

    /// The services a listen received now goes to.
    public var targets: Set<ForwardingTarget> {
        var targets: Set<ForwardingTarget> = []
        if toLastFM, lastFMSession != nil { targets.insert(.lastFM) }
        if listenBrainzToken != nil { targets.insert(.listenBrainz) }
        return targets
    }

    public static func == (a: ForwardingChoice, b: ForwardingChoice) -> Bool {
        a.toLastFM == b.toLastFM && a.listenBrainzToken == b.listenBrainzToken && a.listenBrainzUser == b.listenBrainzUser
            && a.lastFMSession?.name == b.lastFMSession?.name && a.lastFMSession?.key == b.lastFMSession?.key
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(toLastFM)
        hasher.combine(listenBrainzToken)
        hasher.combine(listenBrainzUser)
        hasher.combine(lastFMSession?.name)
    }
}

/// How forwarding to one service stands for one owner, for the settings page.
public struct ForwardingState: Sendable, Hashable {
    public var sent = 0
    public var waiting = 0
    public var failed = 0
    /// When the last listen reached the service.
    public var lastSent: Date?
    /// Why the newest waiting or failed listen is not there yet.
    public var problem: String?

    public init(sent: Int = 0, waiting: Int = 0, failed: Int = 0, lastSent: Date? = nil, problem: String? = nil) {
        self.sent = sent
        self.waiting = waiting
        self.failed = failed
        self.lastSent = lastSent
        self.problem = problem
    }
}

/// The durable outbox of listens to forward to Last.fm and ListenBrainz.
/// `SQLiteForwardingOutbox` and `PostgresForwardingOutbox` play it; one
/// contract test runs against both.
///
/// A listen enters once per owner, service, instant, artist and track
/// (a player that sends it again changes nothing), and moves through
/// waiting → sending (claimed, with a deadline) → sent, or back to waiting
/// with a later due time and the reason, or to failed with the reason. A
/// claim whose deadline passes (its sender died) is taken again, marked
/// uncertain, so the next sender first asks the service whether it arrived.
public protocol ForwardingOutbox: Sendable {
    /// Where `owner` forwards to.
    func choice(of owner: ListOwner) async throws -> ForwardingChoice
    func setForwardsToLastFM(_ on: Bool, for owner: ListOwner, at now: Date) async throws
    /// Sets (or with nil clears) the ListenBrainz token and its user name.
    func setListenBrainz(token: String?, user: String?, for owner: ListOwner, at now: Date) async throws

    /// Puts `listens` in the outbox for each of `targets`, due now; a listen
    /// already there for that service is left as it is. Returns how many
    /// rows are new.
    @discardableResult
    func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at now: Date) async throws -> Int

    /// Claims the due listens of one owner and service (those waiting
    /// longest first, at most `limit(target)` of them, in time order) until
    /// `now + lease`; nil when nothing is due.
    func claim(at now: Date, lease: TimeInterval, limit: @Sendable (ForwardingTarget) -> Int) async throws -> OutboxBatch?
    /// The service has these.
    func markSent(_ ids: [Int64], at now: Date) async throws
    /// Try these again at `due`, saying `reason` meanwhile; `uncertain` when
    /// the service may have them already (it stays set once set).
    func markWaiting(_ ids: [Int64], until due: Date, reason: String, uncertain: Bool) async throws
    /// Asked, the service did not have these: they are certain again.
    func markCertain(_ ids: [Int64]) async throws
    /// These will not be sent: `reason` says why.
    func markFailed(_ ids: [Int64], reason: String, at now: Date) async throws
    /// Puts `owner`'s failed listens for `target` back in line, due now.
    /// Returns how many.
    @discardableResult
    func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int
    /// Takes back claims a process that stopped may have left, when the store
    /// can know that no other process holds them (one process on a SQLite
    /// file); a shared database waits for their deadlines instead.
    func releaseOrphanedClaims() async throws
    /// When the next listen falls due (now or earlier when one is due); nil
    /// when nothing is waiting.
    func nextDue() async throws -> Date?
    /// How forwarding stands for `owner`, by service (only services it has rows for).
    func states(of owner: ListOwner) async throws -> [ForwardingTarget: ForwardingState]
}

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
