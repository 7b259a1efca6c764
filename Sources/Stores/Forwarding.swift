import Foundation
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
