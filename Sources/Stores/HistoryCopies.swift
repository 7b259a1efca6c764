import Foundation
import VinylogueCore

/// A copy of one person's listening history from their service (Last.fm,
/// or ListenBrainz for `lb:` people) into the archive, as the database
/// keeps it: one row per person, whichever process runs the copy.
public struct HistoryCopy: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting for a worker (its job is queued in the `JobQueue`).
        case queued
        /// A worker runs it (its job's claim, under a lease).
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
        queued_at = excluded.queued_at, updated_at = excluded.updated_at
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
    /// When a copy of this person last finished (nil: none ever did, so
    /// the archive may hold only part of their history).
    public var doneAt: Date?

    public init(user: Username, state: State, reason: String? = nil, pagesDone: Int = 0, pagesTotal: Int = 0, scrobbles: Int = 0,
                scrobblesTotal: Int = 0, queuedAt: Date, updatedAt: Date, doneAt: Date? = nil) {
        self.user = user
        self.state = state
        self.reason = reason
        self.pagesDone = pagesDone
        self.pagesTotal = pagesTotal
        self.scrobbles = scrobbles
        self.scrobblesTotal = scrobblesTotal
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
        self.doneAt = doneAt
    }
}

/// A claim on one person's copy: its job's claim in the one queue, which
/// every write of the copy must present (`JobFence`), and the copy's row as
/// it was claimed.
public struct CopyClaim: Sendable, Hashable {
    public let user: Username
    public let job: JobClaim
    public let copy: HistoryCopy

    public init(user: Username, job: JobClaim, copy: HistoryCopy) {
        self.user = user
        self.job = job
        self.copy = copy
    }

    /// The worker holding it (`JobHolder`).
    public var holder: String { job.holder }
}

/// History copies: one row per person with what the copy has done (pages,
/// scrobbles, why it failed), each run by a job of the one queue (kind
/// `historyCopy`, keyed by the person's name key), queued in the same
/// transaction as the row changes. A copy whose worker died is taken over
/// as its job is, and resumes where the archive's own sync state says
/// (`SyncState`), so no person is copied twice at once anywhere in a
/// fleet, and none is lost to a crash. `SQLiteHistoryCopyStore` and
/// `PostgresHistoryCopyStore` play it; one contract test suite runs
/// against both.
public protocol HistoryCopyStore: Sendable {
    /// Queues a copy of `user`: a new one, or one done or failed before (a
    /// refresh), or one the person stopped when `evenIfStopped`. One queued
    /// or copying already is left as it is. Returns the row as it is now.
    func queue(_ user: Username, at now: Date, evenIfStopped: Bool) async throws -> HistoryCopy
    /// Starts the copy whose job the runner claimed: the row says it is
    /// copying. Nil when the row is gone or its job is no longer `job`'s.
    func begin(_ job: JobClaim, at now: Date) async throws -> CopyClaim?
    /// Claims `user`'s copy as `holder` (queuing it first when there is
    /// none, or it is done or failed): nil while another worker holds it,
    /// unless `isGone` says that worker has stopped (a process on this
    /// machine that no longer runs), whose claim is then taken over.
    func claim(_ user: Username, as holder: String, at now: Date, lease: TimeInterval,
               takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> CopyClaim?
    /// Records progress and renews the job's lease (`scrobblesTotal` 0
    /// keeps the total known before); false when the claim is no longer
    /// this holder's (taken over, or the person stopped the copy or deleted
    /// what it copied): the worker must stop.
    func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, scrobblesTotal: Int, at now: Date,
                  lease: TimeInterval) async throws -> Bool
    /// Ends the claimed copy and its job: done, or failed with `reason`
    /// when given. False when the claim was no longer this holder's.
    func finish(_ claim: CopyClaim, failure reason: String?, at now: Date) async throws -> Bool
    /// Puts the claimed copy back in the queue, where it keeps its place
    /// (a worker stopping with the server); false when it was no longer
    /// this holder's.
    func release(_ claim: CopyClaim, at now: Date) async throws -> Bool
    /// Stops `user`'s copy at the person's request: its job is deleted, so
    /// its worker's next page stores nothing and it stops. False when none
    /// was queued or running.
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

    /// Records progress without a new total.
    public func progress(_ claim: CopyClaim, pagesDone: Int, pagesTotal: Int, scrobbles: Int, at now: Date,
                         lease: TimeInterval) async throws -> Bool {
        try await progress(claim, pagesDone: pagesDone, pagesTotal: pagesTotal, scrobbles: scrobbles, scrobblesTotal: 0, at: now, lease: lease)
    }

    /// Claims `user`'s copy under a fresh holder name, taking over no one.
    public func claim(_ user: Username, at now: Date, lease: TimeInterval) async throws -> CopyClaim? {
        try await claim(user, as: JobHolder.name(), at: now, lease: lease, takingOverFrom: { _ in false })
    }
}
