import Foundation
import Stores
import Sync
import Synchronization
import VinylogueCore

/// Brings people's whole histories into the archive without a terminal:
/// the handler of the one job queue's history copies (`JobKind.historyCopy`),
/// for Last.fm people and `lb:` people alike, which also queues them when
/// they are due.
///
/// When copies start: at sign-in, for the account's own history
/// (`start`); at a person's first view, and again for what is new at most
/// once per `freshFor` (`asked(for:)`); a copy that failed is tried again
/// after `retryFailuresAfter`; one the person stopped waits for them; a
/// person's own finished copy is refreshed after a day (`look(at:)`).
///
/// Queueing a copy wakes the job runner (`queued`), which claims it at
/// once when one of this kind's `slots` is free, here or on another
/// instance; the claim is the job's, with a lease, so no one is copied
/// twice at once anywhere in a fleet, and a copy whose process died is
/// taken over. Their requests share the service's budget, which serves
/// page views first. Stopping the server puts the running copies back in
/// the queue where they stand; they resume page by page from the
/// archive's sync state.
public final class HistoryCopyWorker: JobHandler, HistoryCopyRequests {
    public let copies: any HistoryCopyStore
    let claimed: ClaimedCopy
    /// The sync of a person from their own service.
    let syncs: @Sendable (Username) -> ScrobbleSync
    /// Whether views may start a copy of this person: everyone on a list
    /// (the web app's rule), so a stranger's address does not spend the
    /// budget on a whole history.
    let mayCopyOnView: @Sendable (Username) async -> Bool
    public let clock: WallClock
    public let concurrency: Int
    public let freshFor: TimeInterval
    public let retryFailuresAfter: TimeInterval
    /// How old a person's own finished copy may get before it is refreshed
    /// without a view (a day).
    public let refreshOwnAfter: TimeInterval = 86_400
    /// The Last.fm requests a second copies may make at most (the budget
    /// views leave them), for the time a copy has left.
    public let lastFMPagesPerSecond: Double
    /// What a copy runs inside (the web app: no page's deadline, and the
    /// budget's background priority).
    let context: @Sendable (@escaping @Sendable () async -> Void) async -> Void
    /// Tells the job runner a copy is queued.
    let queued: Wakeup
    /// Runs work a page set going after the page is answered (the web
    /// app's `BackgroundWork`); in a task of its own by default.
    let later: @Sendable (@escaping @Sendable () async -> Void) async -> Void
    /// Told when a copy ends: what it stored shows at once.
    let changes: ListeningChanges?
    private let state = Mutex(State())

    private struct State {
        /// Copies running in this process, by name key.
        var running: Set<String> = []
        /// How each person's last copy here failed: the kind of failure,
        /// which the row keeps only as a sentence.
        var failures: [String: SourceError] = [:]
        /// Callers of `settled`, woken whenever a copy here ends.
        var waiters: [Wakeup] = []
        /// When people's own histories were last looked at for a refresh.
        var lastSweep: Date?
    }

    public init(copies: any HistoryCopyStore, syncs: @escaping @Sendable (Username) -> ScrobbleSync, clock: WallClock, queued: Wakeup,
                concurrency: Int = 4, lease: TimeInterval = 300, freshFor: TimeInterval = 3600, retryFailuresAfter: TimeInterval = 300,
                lastFMPagesPerSecond: Double = 5, mayCopyOnView: @escaping @Sendable (Username) async -> Bool = { _ in true },
                context: @escaping @Sendable (@escaping @Sendable () async -> Void) async -> Void = { await $0() },
                later: (@Sendable (@escaping @Sendable () async -> Void) async -> Void)? = nil, changes: ListeningChanges? = nil) {
        self.copies = copies
        self.changes = changes
        self.claimed = ClaimedCopy(copies: copies, clock: clock, lease: lease)
        self.syncs = syncs
        self.clock = clock
        self.queued = queued
        self.concurrency = max(1, concurrency)
        self.freshFor = freshFor
        self.retryFailuresAfter = retryFailuresAfter
        self.lastFMPagesPerSecond = max(0.01, lastFMPagesPerSecond)
        self.mayCopyOnView = mayCopyOnView
        self.context = context
        self.later = later ?? { work in _ = Task { await work() } }
    }

    public var kind: JobKind { .historyCopy }
    public var slots: Int { concurrency }

    /// `user`'s copy as it stands (nil: none, or the table could not be read).
    public func copy(of user: Username) async -> HistoryCopy? {
        try? await copies.copy(of: user)
    }

    /// About how long `copy` has left: its pages to go, at the budget's
    /// pace shared with the other copies running here (nil when its length
    /// is not known, as for ListenBrainz's).
    public func secondsLeft(_ copy: HistoryCopy) -> TimeInterval? {
        guard copy.isUnfinished, copy.pagesTotal > 0, copy.user.service == .lastFM else { return nil }
        let sharing = max(1, state.withLock { $0.running.count })
        return Double(max(0, copy.pagesTotal - copy.pagesDone)) * Double(sharing) / lastFMPagesPerSecond
    }

    /// How `user`'s last copy in this process failed, when it did.
    public func failure(of user: Username) -> SourceError? {
        state.withLock { $0.failures[user.key] }
    }

    /// A view of `user`'s pages: starts their first copy, a refresh when
    /// the last finished `freshFor` ago, or a new try when the last failed
    /// `retryFailuresAfter` ago (never one the person stopped); returns the
    /// copy as it stands then.
    @discardableResult
    public func asked(for user: Username) async -> HistoryCopy? {
        let current = await copy(of: user)
        guard isDue(current), await mayCopyOnView(user) else { return current }
        return await begin(user, evenIfStopped: false) ?? current
    }

    /// A page's view of `user`, which must not wait for a copy to be
    /// queued: reads the copy as it stands and, when one is due, queues it
    /// in the background (`later`, after the page is answered) and returns
    /// it as it will stand, queued.
    public func viewed(_ user: Username) async -> HistoryCopy? {
        await viewed(user, standing: await copy(of: user))
    }

    public func viewed(_ user: Username, standing current: HistoryCopy?) async -> HistoryCopy? {
        guard isDue(current), await mayCopyOnView(user) else { return current }
        await later { _ = await self.begin(user, evenIfStopped: false) }
        return Self.queued(current, of: user, at: clock.now)
    }

    /// Whether a view starts a copy: none yet, the last finished
    /// `freshFor` ago, or failed `retryFailuresAfter` ago (never one that
    /// is queued, running or stopped by the person).
    func isDue(_ current: HistoryCopy?) -> Bool {
        guard let current else { return true }
        let now = clock.now
        switch current.state {
        case .queued, .copying, .stopped: return false
        case .done: return now.timeIntervalSince(current.doneAt ?? current.updatedAt) >= freshFor
        case .failed: return now.timeIntervalSince(current.updatedAt) >= retryFailuresAfter
        }
    }

    /// `current` as queueing it again leaves it (`HistoryCopy.requeued`:
    /// a finished copy's refresh counts anew), or a new copy, queued.
    static func queued(_ current: HistoryCopy?, of user: Username, at now: Date) -> HistoryCopy {
        guard var copy = current else { return HistoryCopy(user: user, state: .queued, queuedAt: now, updatedAt: now) }
        if copy.state == .done { (copy.pagesDone, copy.pagesTotal, copy.scrobbles, copy.scrobblesTotal) = (0, 0, 0, 0) }
        (copy.state, copy.reason, copy.queuedAt, copy.updatedAt) = (.queued, nil, now, now)
        return copy
    }

    /// Starts a copy of `user` at their own request (at sign-in, or from
    /// Settings), even one they stopped; returns it as it stands then.
    @discardableResult
    public func start(_ user: Username) async throws(SourceError) -> HistoryCopy {
        guard let copy = await begin(user, evenIfStopped: true) else {
            throw .storage(detail: "the copy of \(user.value) could not be queued")
        }
        return copy
    }

    /// Stops `user`'s copy at their request: its job is deleted, so its
    /// worker stores nothing more and stops at its next page; what was
    /// copied stays. False when none was queued or running.
    public func stop(_ user: Username) async throws(SourceError) -> Bool {
        do { return try await copies.stop(user, at: clock.now) } catch { throw ClaimedCopy.storage(error) }
    }

    /// Deletes what copies of `user`'s history stored in `archive` (at
    /// their request): the copy is stopped first, then its listens go
    /// (`SyncLog.forgetCopy(of:)`), and the copy is left stopped with
    /// nothing copied, so nothing starts it again by itself. Returns how
    /// many listens went.
    public func forget(_ user: Username, from archive: any SyncLog) async throws(SourceError) -> Int {
        _ = try await stop(user)
        let forgotten = try await archive.forgetCopy(of: user)
        do { try await copies.clear(user, at: clock.now) } catch { throw ClaimedCopy.storage(error) }
        return forgotten
    }

    /// Queues `user`'s copy (and its job) and wakes the runner.
    private func begin(_ user: Username, evenIfStopped: Bool) async -> HistoryCopy? {
        guard let queued = try? await copies.queue(user, at: clock.now, evenIfStopped: evenIfStopped) else { return nil }
        self.queued.signal()
        return queued
    }

    /// Runs the copy the runner claimed.
    public func run(_ job: JobClaim) async -> JobEnding {
        let claim: CopyClaim
        do {
            guard let begun = try await copies.begin(job, at: clock.now) else {
                // Stopped or deleted before it began: nothing to copy.
                return .failed(reason: "The copy is no longer wanted.")
            }
            claim = begun
        } catch {
            return .retry(at: clock.now.addingTimeInterval(retryFailuresAfter), reason: ClaimedCopy.storage(error).message)
        }
        let key = claim.user.key
        state.withLock { _ = $0.running.insert(key) }
        let claimed = self.claimed, sync = syncs(claim.user)
        let outcome = Outcome()
        await context {
            do throws(SourceError) { _ = try await claimed.run(claim, sync) } catch { outcome.failure.withLock { $0 = error } }
        }
        let failure = outcome.failure.withLock { $0 }
        // What it stored shows at once, and the page's source may change
        // with the copy's end (from Last.fm to the archive).
        await changes?.changed(.listens(claim.user))
        let waiters = state.withLock { state in
            state.failures[key] = failure
            state.running.remove(key)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        waiters.forEach { $0.signal() }
        // The copy's row and job were ended with it (`ClaimedCopy`); this
        // says the same to the runner.
        guard let failure else { return .done }
        return Task.isCancelled ? .stopped : .failed(reason: failure.message)
    }

    /// A failure carried out of the copy's context.
    private final class Outcome: Sendable {
        let failure = Mutex<SourceError?>(nil)
    }

    /// Once an hour: people's own histories (accounts, the household's
    /// "me") copied more than a day ago are queued again.
    public func look(at now: Date) async {
        let due = state.withLock { state -> Bool in
            guard state.lastSweep.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            state.lastSweep = now
            return true
        }
        guard due else { return }
        if let n = try? await copies.refreshOwnHistories(doneBefore: now.addingTimeInterval(-refreshOwnAfter), at: now), n > 0 {
            queued.signal()
        }
    }

    /// Returns once no copy of `user` is queued or running (for tests and
    /// the command line): wakes whenever a copy here ends, and looks at the
    /// row again then (and every `recheck`, for copies run elsewhere).
    public func settled(_ user: Username, recheck: Duration = .milliseconds(200)) async {
        while !Task.isCancelled, let copy = await copy(of: user), copy.isUnfinished {
            let ended = Wakeup()
            state.withLock { $0.waiters.append(ended) }
            await ended.wait(atMost: recheck)
        }
    }
}
