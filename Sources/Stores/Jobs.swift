import Foundation
import VinylogueCore

/// What a durable job does; each kind has one handler in the workers.
public struct JobKind: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// An export uploaded on Settings, imported into its person's archive.
    public static let upload = JobKind(rawValue: "upload")
    /// A copy of a person's whole history from their service (keyed by
    /// their name key; `HistoryCopyStore` keeps its progress).
    public static let historyCopy = JobKind(rawValue: "history-copy")
    /// Sending what is due of one owner's received listens to one service
    /// (keyed by `ForwardingJob.key`; the outbox keeps the listens).
    public static let forwarding = JobKind(rawValue: "forwarding")
    /// An email of the weekly digest's (a digest, "send it now", a
    /// confirmation link), keyed by its `digest_send` row's id.
    public static let digest = JobKind(rawValue: "digest")
    /// A person's kept charts counted again after they changed how their
    /// albums group (`AlbumChoices`), keyed by their name key.
    public static let albumFolding = JobKind(rawValue: "album-folding")
    /// A week's playlist made again on an owner's music server when the
    /// week changes (`KeptPlaylists`), keyed by the owner's id.
    public static let weeklyPlaylist = JobKind(rawValue: "weekly-playlist")

    public var description: String { rawValue }

    public static func < (a: JobKind, b: JobKind) -> Bool { a.rawValue < b.rawValue }
}

/// One row of the job queue: what to do, for whom, and where its run
/// stands. Domain tables keep what the job is about (an upload's file and
/// summary); this row keeps only who runs it, until when, and what comes
/// next.
public struct DurableJob: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting for `notBefore`, then for a worker.
        case queued
        /// Claimed by `holder` until `leaseUntil`.
        case running
        /// Its handler finished it.
        case done
        /// Its handler gave up on it (`reason` says why).
        case failed

        /// Whether it may still run.
        public var isUnfinished: Bool { self == .queued || self == .running }
    }

    public let id: Int64
    public let kind: JobKind
    /// The name key (`Username.key`) of the person whose data it writes:
    /// deleting that person's data deletes the job, and its writes stop
    /// landing (`JobFence`).
    public let person: String
    /// What it is about, unique among the unfinished jobs of its kind (a
    /// second `enqueue` of the same kind and key gives back the first).
    public let key: String
    /// What its handler needs besides `key`, in the handler's own form.
    public let payload: String
    /// The only machine that may run it (an upload's file is on that
    /// machine's disk); nil for any.
    public let machine: String?
    public var state: State
    /// How many runs began (a run stopped with the server gives its try back).
    public var attempts: Int
    public var holder: String?
    public var leaseUntil: Date?
    /// Not claimed before this.
    public var notBefore: Date
    /// Why the last run did not finish it, in words for the person.
    public var reason: String?
    public var queuedAt: Date
    public var updatedAt: Date

    public init(id: Int64, kind: JobKind, person: String, key: String, payload: String, machine: String?, state: State, attempts: Int,
                holder: String?, leaseUntil: Date?, notBefore: Date, reason: String?, queuedAt: Date, updatedAt: Date) {
        self.id = id
        self.kind = kind
        self.person = person
        self.key = key
        self.payload = payload
        self.machine = machine
        self.state = state
        self.attempts = attempts
        self.holder = holder
        self.leaseUntil = leaseUntil
        self.notBefore = notBefore
        self.reason = reason
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
    }

    /// Whether a worker may claim it at `now`: queued and due, or running
    /// under a lease that has run out or a holder `isGone` says has ended.
    public func isClaimable(at now: Date, takingOverFrom isGone: (String) -> Bool) -> Bool {
        switch state {
        case .queued: notBefore <= now
        case .running: (leaseUntil ?? .distantPast) <= now || holder.map(isGone) == true
        case .done, .failed: false
        }
    }
}

/// A job as its worker holds it: the row as claimed and the holder's name,
/// which every later step (renew, finish, the fence of its writes) must
/// present.
public struct JobClaim: Sendable, Hashable {
    public let job: DurableJob
    public let holder: String

    public init(job: DurableJob, holder: String) {
        self.job = job
        self.holder = holder
    }

    /// The fence this job's writes are made under.
    public var fence: JobFence { JobFence(.job(id: job.id), holder: holder) }
}

/// Every job that outlives a request, in one table: queued once per kind
/// and key, claimed with a lease by one worker (on PostgreSQL, of the whole
/// fleet), renewed while it runs, taken over when its lease runs out or its
/// holder's process has ended, finished, retried later or failed, and
/// deleted with its person's data. Each backend answers in its own SQL;
/// `JobQueueContractTests` holds both to the same behaviour.
public protocol JobQueue: Sendable {
    /// Queues a job, due at `notBefore` (now when nil); an unfinished job
    /// of the same kind and key is given back instead, unchanged.
    func enqueue(_ kind: JobKind, for person: Username, key: String, payload: String, machine: String?, notBefore: Date?,
                 at now: Date) async throws -> DurableJob
    /// Claims, for `lease` seconds as `holder`, the claimable job of one of
    /// `kinds` that `machine` may run and that has waited longest; nil when
    /// none is.
    func claimNext(of kinds: Set<JobKind>, on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                   takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim?
    /// Claims the unfinished job of `kind` and `key` as `holder`, due or
    /// not (a person's own request runs at once): nil when there is none,
    /// or another worker holds it under a live lease and `isGone` does not
    /// say that worker has ended.
    func claim(_ kind: JobKind, key: String, as holder: String, at now: Date, lease: TimeInterval,
               takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> JobClaim?
    /// Renews the claim; false when it is no longer `claim.holder`'s (taken
    /// over, or deleted with its person's data).
    func renew(_ claim: JobClaim, at now: Date, lease: TimeInterval) async throws -> Bool
    /// Ends the claimed job: done, failed with `reason`, queued again for
    /// `retryAt` with `reason`, or handed back as it was before this run
    /// (the server is stopping: the try is not counted). False when the
    /// claim was no longer held.
    func end(_ claim: JobClaim, as ending: JobEnding, at now: Date) async throws -> Bool
    /// The job with this id, if it is still kept.
    func job(_ id: Int64) async throws -> DurableJob?
    /// The jobs of `kind` and `key`, newest first.
    func jobs(of kind: JobKind, key: String) async throws -> [DurableJob]
    /// When the next job of `kinds` that `machine` may run falls due (now
    /// or earlier for one waiting); nil when none is queued.
    func nextDue(of kinds: Set<JobKind>, on machine: String) async throws -> Date?
    /// The holders of the running jobs of `kinds` that `machine` may run:
    /// a runner looks sooner while a process of its own machine holds one
    /// (it sees at once when that process has ended, `JobHolder.isGone`).
    func runningHolders(of kinds: Set<JobKind>, on machine: String) async throws -> Set<String>
    /// How many jobs of `kind` are in each state.
    func counts(of kind: JobKind) async throws -> [DurableJob.State: Int]
    /// Deletes the jobs of `person` (of `kinds`, or every kind when nil),
    /// running or not: their writes stop landing. Returns how many.
    func cancel(of person: Username, kinds: Set<JobKind>?) async throws -> Int
    /// Deletes the jobs that ended before `date`; returns how many.
    func forget(endedBefore date: Date) async throws -> Int
}

/// What one kind of job does with a claimed job of its kind, run by the
/// workers' one `JobRunner`.
public protocol JobHandler: Sendable {
    var kind: JobKind { get }
    /// How many jobs of this kind one instance runs at once.
    var slots: Int { get }
    /// Runs the job; every write it makes goes under `claim.fence` (or a
    /// fence built on it), so a job deleted meanwhile stores nothing more.
    /// Returns how the run ended; a run cut short because its task was
    /// cancelled (the server is stopping) returns `.stopped`.
    func run(_ claim: JobClaim) async -> JobEnding
    /// Called at each of the runner's looks (when woken, when a job falls
    /// due, at least every poll): for work a kind does by the clock, such
    /// as queueing its own jobs.
    func look(at now: Date) async
}

extension JobHandler {
    public var slots: Int { 1 }
    public func look(at now: Date) async {}
}

/// How a run of a job ended, as its handler says and the runner records.
public enum JobEnding: Sendable, Hashable {
    case done
    /// Given up: it will not run again.
    case failed(reason: String)
    /// Queued again, due at `at`.
    case retry(at: Date, reason: String)
    /// Handed back unfinished, the try not counted: the server is stopping.
    case stopped

    /// The row's state after it.
    public var state: DurableJob.State {
        switch self {
        case .done: .done
        case .failed: .failed
        case .retry, .stopped: .queued
        }
    }

    public var reason: String? {
        switch self {
        case .failed(let reason), .retry(_, let reason): reason
        case .done, .stopped: nil
        }
    }
}

/// When a job that did not finish is tried again: after `first`, doubling
/// each time up to `longest`, for at most `tries` runs.
public struct RetrySchedule: Sendable, Hashable {
    public let first: TimeInterval
    public let longest: TimeInterval
    public let tries: Int

    public init(first: TimeInterval = 60, longest: TimeInterval = 6 * 3600, tries: Int = 10) {
        self.first = first
        self.longest = longest
        self.tries = tries
    }

    /// The wait before the next run, after `attempts` runs; nil when no
    /// run is left.
    public func wait(after attempts: Int) -> TimeInterval? {
        guard attempts < tries else { return nil }
        let doublings = max(0, min(attempts - 1, 30))
        return min(longest, first * pow(2, Double(doublings)))
    }
}
