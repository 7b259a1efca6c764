import Foundation
import VinylogueCore

/// A copy of one person's listening history from their service (Last.fm,
/// or ListenBrainz for `lb:` people) into the archive, as the database
/// keeps it: one row per person, whichever process runs the copy.
public struct HistoryCopy: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting for a worker.
        case queued
        /// Claimed by a worker, whose lease runs until `leaseUntil`.
        case copying
        /// Every page copied.
        case done
        /// Stopped with `reason`; queued again when asked for again.
        case failed
        /// Stopped by the person: not started again by their views, only
        /// when they ask for it.
        case stopped
    }

    /// What an upsert of `history_copy` sets when it queues a copy again
    /// (`INSERT … ON CONFLICT (name_key) DO UPDATE SET` this), in the SQL
    /// both stores speak: a finished copy's refresh counts anew; one
    /// stopped or failed midway keeps its counts, since it resumes from
    /// the archive's sync state.
    public static let requeued = """
        state = 'queued', reason = NULL,
        pages_done = CASE WHEN history_copy.state = 'done' THEN 0 ELSE history_copy.pages_done END,
        pages_total = CASE WHEN history_copy.state = 'done' THEN 0 ELSE history_copy.pages_total END,
        scrobbles = CASE WHEN history_copy.state = 'done' THEN 0 ELSE history_copy.scrobbles END,
        scrobbles_total = CASE WHEN history_copy.state = 'done' THEN 0 ELSE history_copy.scrobbles_total END,
        queued_at = excluded.queued_at, updated_at = excluded.updated_at, lease_until = NULL, holder = NULL
        """

    /// Whether a worker has yet to finish it.
    public var isUnfinished: Bool { state == .queued || state == .copying }

    public let user: Username
    public var state: State
    /// Why it failed, in words for the person.
    public var reason: String?
    /// Pages copied so far, of `pagesTotal` (0 while not known).
    public var pagesDone: Int
    public var pagesTotal: Int
    /// Scrobbles walked by this copy so far (stored, or already there).
    public var scrobbles: Int
    /// How many scrobbles the service said the copy would walk (0: not said).
    public var scrobblesTotal: Int
    public var queuedAt: Date
    public var updatedAt: Date
    /// While copying: when the worker's claim ends unless it renews it.
    public var leaseUntil: Date?
    /// When a copy of this person last finished (nil: none ever did, so
    /// the archive may hold only part of their history).
    public var doneAt: Date?

    public init(user: Username, state: State, reason: String? = nil, pagesDone: Int = 0, pagesTotal: Int = 0, scrobbles: Int = 0,
                scrobblesTotal: Int = 0, queuedAt: Date, updatedAt: Date, leaseUntil: Date? = nil, doneAt: Date? = nil) {
        self.user = user
        self.state = state
        self.reason = reason
        self.pagesDone = pagesDone
        self.pagesTotal = pagesTotal
        self.scrobbles = scrobbles
        self.scrobblesTotal = scrobblesTotal
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
        self.leaseUntil = leaseUntil
        self.doneAt = doneAt
    }
}

/// A claim on one person's copy: only its holder may report progress or
/// end it, and only while its lease lasts (or until another claims it).
public struct CopyClaim: Sendable, Hashable {
    public let user: Username
    /// A random value naming this claim in the row.
    public let holder: String
    public let copy: HistoryCopy

    public init(user: Username, holder: String, copy: HistoryCopy) {
        self.user = user
        self.holder = holder
        self.copy = copy
    }
}

/// History copies as durable jobs: queued, claimed with a lease (as the
/// forwarding outbox claims its rows), done, or failed with a reason. A
/// copy whose worker died is claimed again once its lease has run out, and
/// resumes where the archive's own sync state says (`SyncState`), so no
/// person is copied twice at once anywhere in a fleet, and none is lost to
/// a crash. `SQLiteHistoryCopyStore` and `PostgresHistoryCopyStore` play it;
/// one contract test suite runs against both.
public protocol HistoryCopyStore: Sendable {
    /// Queues a copy of `user`: a new one, or one done or failed before (a
    /// refresh), or one the person stopped when `evenIfStopped`. One queued
    /// or copying already is left as it is. Returns the row as it is now.
    func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy
    /// Claims, for `lease` seconds as `holder`, the copy queued longest ago,
    /// or one whose worker's lease ran out or whose worker `isGone` says
    /// has stopped; nil when none waits.
    func claimNext(as holder: String, at now: Date, lease: TimeInterval,
                   takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim?
    /// Claims `user`'s copy as `holder` (queuing it first when there is
    /// none, or it is done or failed): nil while another worker holds it,
    /// unless `isGone` says that worker has stopped (a process on this
    /// machine that no longer runs), whose claim is then taken over.
    func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
               takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim?
    /// Records progress and renews the lease (`scrobblesTotal` 0 keeps the
    /// total known before); false when the claim is no longer this
    /// holder's (its lease ran out and another took it, or the person
    /// stopped the copy): the worker must stop.
    func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                  lease: TimeInterval) async throws -> Bool
    /// Ends the claimed copy: done, or failed with `reason` when given.
    /// False when the claim was no longer this holder's.
    func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool
    /// Puts the claimed copy back in the queue, where it keeps its place
    /// (a worker stopping with the server); false when it was no longer
    /// this holder's.
    func release(_ claim: CopyClaim, at now: Date) async throws -> Bool
    /// Stops `user`'s copy at the person's request: its worker stops at
    /// its next page. False when none was queued or running.
    func stop(_ user: Username, at now: Date) async throws -> Bool
    /// Marks `user`'s copy stopped with nothing copied (what it stored was
    /// deleted), so that no view or daily refresh starts it again by itself.
    func clear(_ user: Username, at now: Date) async throws
    /// `user`'s copy as it stands, nil when none was ever queued.
    func copy(of user: Username) async throws -> HistoryCopy?
    /// Every copy queued or running, the longest queued first.
    func unfinished() async throws -> [HistoryCopy]
    /// How many copies are in each state (for the operator's figures).
    func counts() async throws -> [HistoryCopy.State: Int]
    /// Queues again, for what is new, the finished copies of people marked
    /// "me" on a list (an account's own, the household's) that last
    /// finished before `doneBefore`; returns how many.
    func refreshOwnHistories(doneBefore: Date, at now: Date) async throws -> Int
}

extension HistoryCopyStore {
    /// Queues a copy of `user`, leaving one the person stopped as it is.
    public func queue(_ user: Username, at now: Date) async throws -> HistoryCopy {
        try await queue(user, at: now, evenIfStopped: false)
    }

    /// Claims the next waiting copy under a fresh holder name, taking over no one.
    public func claimNext(at now: Date, lease: TimeInterval) async throws -> CopyClaim? {
        try await claimNext(as: CopyClaim.newHolder(), at: now, lease: lease, takingOverFrom: { _ in false })
    }

    /// Records progress without a new total.
    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        try await progress(claim, pagesDone: pagesDone, pagesTotal: pagesTotal, scrobbles: scrobbles, scrobblesTotal: 0, at: now, lease: lease)
    }

    /// Claims `user`'s copy under a fresh holder name, taking over no one.
    public func claim(_ user: Username, at now: Date, lease: TimeInterval) async throws -> CopyClaim? {
        try await claim(user, as: CopyClaim.newHolder(), at: now, lease: lease, takingOverFrom: { _ in false })
    }
}

extension CopyClaim {
    /// A fresh random name for a claim's holder.
    public static func newHolder() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(UInt8.random(in: .min ... .max, using: &generator), radix: 16) }.joined()
    }
}
