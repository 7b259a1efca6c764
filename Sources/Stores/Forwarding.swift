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

/// One row of the outbox, as the forwarding job reads it.
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

/// The job of the one queue (`JobKind.forwarding`) that sends what is due
/// of one owner's listens to one service: one per owner and service, not
/// per listen, so a burst of listens is one job and the service sees one
/// sender per person at a time.
public struct ForwardingJob: Sendable, Hashable {
    public let owner: ListOwner
    public let target: ForwardingTarget

    public init(owner: ListOwner, target: ForwardingTarget) {
        self.owner = owner
        self.target = target
    }

    /// Read back from a job's key; nil for a key no forwarding job has.
    public init?(key: String) {
        let parts = key.split(separator: "/")
        guard parts.count == 2, let id = Int64(parts[0]), id >= 0, let code = Int(parts[1]),
              let target = ForwardingTarget(rawValue: code) else { return nil }
        self.init(owner: ListOwner(id: id), target: target)
    }

    /// The job's key: "<owner id>/<target code>", unique per owner and service.
    public var key: String { "\(owner.id)/\(target.rawValue)" }

    /// How a run ends when nothing of it is due now: done when nothing
    /// waits, else queued again for `nextDue` (a backoff, or the service's
    /// own "retry after").
    public static func ending(nextDue: Date?) -> JobEnding {
        guard let nextDue else { return .done }
        return .retry(at: nextDue, reason: "Listens wait to be sent again.")
    }
}

/// What one step of a forwarding job learnt about its listens, written
/// together under the job's fence (`ForwardingOutbox.record`).
public struct OutboxMarks: Sendable, Hashable {
    /// The service has these.
    public var sent: [Int64] = []
    /// About to be handed to the service: uncertain until the outcome is
    /// recorded, so a sender killed mid-send leaves them to be asked about.
    public var sending: [Int64] = []
    /// To try again at `due`, with `reason` meanwhile; `uncertain` when the
    /// service may have them (nil: each stays as it was, for listens no
    /// send was tried with).
    public var waiting: [Waiting] = []
    /// Not to be sent, with the reason; `uncertain` kept for a later "try
    /// again", which then asks the service first (nil: as it was).
    public var failed: [Failed] = []

    public struct Waiting: Sendable, Hashable {
        public let ids: [Int64]
        public let due: Date
        public let reason: String
        public let uncertain: Bool?

        public init(ids: [Int64], due: Date, reason: String, uncertain: Bool?) {
            self.ids = ids
            self.due = due
            self.reason = reason
            self.uncertain = uncertain
        }
    }

    public struct Failed: Sendable, Hashable {
        public let ids: [Int64]
        public let reason: String
        public let uncertain: Bool?

        public init(ids: [Int64], reason: String, uncertain: Bool?) {
            self.ids = ids
            self.reason = reason
            self.uncertain = uncertain
        }
    }

    public init(sent: [Int64] = [], sending: [Int64] = [], waiting: [Waiting] = [], failed: [Failed] = []) {
        self.sent = sent
        self.sending = sending
        self.waiting = waiting
        self.failed = failed
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
/// waiting → sent, or back to waiting with a later due time and the
/// reason, or to failed with the reason. The rows are what is sent; who
/// sends them is the one job queue's: entering a listen queues (or leaves
/// queued) its owner's `ForwardingJob` for that service in the same
/// transaction, and the job's writes go under its fence.
public protocol ForwardingOutbox: Sendable {
    /// Where `owner` forwards to.
    func choice(of owner: ListOwner) async throws -> ForwardingChoice
    func setForwardsToLastFM(_ on: Bool, for owner: ListOwner, at now: Date) async throws
    /// Sets (or with nil clears) the ListenBrainz token and its user name.
    func setListenBrainz(token: String?, user: String?, for owner: ListOwner, at now: Date) async throws

    /// Puts `listens` in the outbox for each of `targets`, due now, with
    /// the owner's job for each service queued (or brought forward to now)
    /// in the same transaction; a listen already there for that service is
    /// left as it is. Returns how many rows are new.
    @discardableResult
    func enqueue(_ listens: [ListenToForward], of owner: ListOwner, to targets: Set<ForwardingTarget>, at now: Date) async throws -> Int

    /// The job's listens due at `now`, in time order, at most `limit`.
    func due(for job: ForwardingJob, at now: Date, limit: Int) async throws -> [OutboxListen]
    /// Writes `marks` for the claimed job's listens in one transaction that
    /// first checks the job's fence (`JobFence`; `SourceError.cancelled`
    /// and nothing written when the job is gone or another holds it). When
    /// nothing is being sent and nothing of the job is due at `now`, the
    /// same transaction ends the job — done when nothing waits, queued
    /// again for the earliest due listen otherwise — and returns how it
    /// ended; nil while more is due now (the run goes on). Ended in one
    /// transaction with the check, a listen entered meanwhile either is
    /// seen here or finds the job ended and queues a new one.
    func record(_ marks: OutboxMarks, for job: ForwardingJob, under claim: JobClaim, at now: Date) async throws -> JobEnding?
    /// Puts `owner`'s failed listens for `target` back in line, due now,
    /// with their job. Returns how many.
    @discardableResult
    func retryFailed(of owner: ListOwner, target: ForwardingTarget, at now: Date) async throws -> Int
    /// When the next listen falls due (now or earlier when one is due); nil
    /// when nothing is waiting.
    func nextDue() async throws -> Date?
    /// How forwarding stands for `owner`, by service (only services it has rows for).
    func states(of owner: ListOwner) async throws -> [ForwardingTarget: ForwardingState]
}
