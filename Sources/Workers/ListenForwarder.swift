import Foundation
import Logging
import Stores
import VinylogueCore

/// Forwards received listens to Last.fm and ListenBrainz: the handler of
/// the one job queue's forwarding jobs (`JobKind.forwarding`, one per
/// owner and service, `ForwardingJob`), over the durable outbox
/// (`ForwardingOutbox`).
///
/// A listen is in the outbox, and its owner's job queued, before its player
/// hears "ok", so a crash loses none. The runner claims the job; a run
/// sends the owner's due listens batch by batch and records what happened
/// to each under the job's fence: sent; waiting, with a backoff (5 s
/// doubling to an hour, or the service's own "retry after") and the
/// reason; or failed, with the reason, when the credentials are refused,
/// the service ignores a listen for good, or 20 tries have failed. The
/// write that finds nothing more due ends the job in its transaction:
/// done, or queued again for the earliest backoff.
///
/// Never twice: listens are marked uncertain before they are handed to the
/// service, and a send whose fate is unknown (a timeout, a cut connection,
/// an unreadable answer, or a sender killed mid-send, whose job is taken
/// over) leaves them so; before they are sent again the service is asked
/// which of them it has (`ForwardingUpstream.arrived`).
public final class ListenForwarder: JobHandler {
    let outbox: any ForwardingOutbox
    private let byTarget: [ForwardingTarget: any ForwardingUpstream]
    let clock: WallClock
    let logger: Logger
    public let slots: Int
    /// Tries before a listen counts as failed.
    static let maxAttempts = 20
    /// Batches one run sends before it hands the job back, due at once, so
    /// that one person's backlog does not keep a slot from everyone else.
    static let batchesPerRun = 20

    public init(outbox: any ForwardingOutbox, upstreams: [any ForwardingUpstream], clock: WallClock, slots: Int = 4,
                logger: Logger = Logger(label: "vinylogue.forwarding")) {
        self.outbox = outbox
        self.byTarget = Dictionary(upstreams.map { ($0.target, $0) }, uniquingKeysWith: { first, _ in first })
        self.clock = clock
        self.slots = max(1, slots)
        self.logger = logger
    }

    public var kind: JobKind { .forwarding }

    /// Sends what is due of the claimed job's owner to its service.
    public func run(_ claim: JobClaim) async -> JobEnding {
        guard let job = ForwardingJob(key: claim.job.key) else { return .failed(reason: "Not a forwarding job: \(claim.job.key)") }
        for _ in 0..<Self.batchesPerRun {
            if Task.isCancelled { return .stopped }
            do {
                if let ending = try await sendBatch(of: job, under: claim) { return ending }
            } catch SourceError.cancelled {
                // Deleted with its owner's account, or taken over: nothing
                // of this run lands, and the runner's ending finds no claim.
                return .failed(reason: "The forwarding job is no longer this worker's.")
            } catch where Task.isCancelled {
                return .stopped
            } catch {
                // The outbox could not record the outcome: the listens stay
                // uncertain, to be checked with the service before they are sent.
                logger.warning("could not record a forwarding outcome: \(error)")
                return .retry(at: clock.now.addingTimeInterval(Self.backoff(afterTries: 1)), reason: "The outbox could not be written: \(error)")
            }
        }
        return .retry(at: clock.now, reason: "More to send, after other people's turns.")
    }

    /// Sends one batch of the job's due listens and records what became of
    /// them; the job's ending once nothing more is due now, else nil.
    func sendBatch(of job: ForwardingJob, under claim: JobClaim) async throws -> JobEnding? {
        let upstream = byTarget[job.target]
        let listens = try await outbox.due(for: job, at: clock.now, limit: upstream?.batchLimit ?? 50)
        let ids = listens.map(\.id)
        guard !listens.isEmpty else {
            // Nothing due (sent meanwhile, or deleted): `record` ends the
            // job, or finds a listen that came meanwhile.
            return try await outbox.record(OutboxMarks(), for: job, under: claim, at: clock.now)
        }
        guard let upstream else {
            let waiting = OutboxMarks.Waiting(ids: ids, due: clock.now.addingTimeInterval(3600),
                                              reason: "This server is not set up to forward to \(job.target.name) now.", uncertain: nil)
            return try await outbox.record(OutboxMarks(waiting: [waiting]), for: job, under: claim, at: clock.now)
        }
        let choice = try await outbox.choice(of: job.owner)
        guard choice.targets.contains(job.target) else {
            let reason = job.target == .lastFM
                ? "Forwarding to Last.fm was turned off, or the account is no longer signed in with Last.fm."
                : "The ListenBrainz token was removed."
            let failed = OutboxMarks.Failed(ids: ids, reason: reason + " Turn it on again, then try the failed ones again.", uncertain: nil)
            return try await outbox.record(OutboxMarks(failed: [failed]), for: job, under: claim, at: clock.now)
        }
        var pending = listens
        var before = OutboxMarks()
        let uncertain = pending.filter(\.uncertain)
        if !uncertain.isEmpty {
            let there: Set<Int64>
            do {
                there = try await upstream.arrived(uncertain, as: choice)
            } catch {
                let marks = retry(pending, reason: "\(job.target.name) could not be asked whether earlier listens arrived: \(error.message)",
                                  after: nil, uncertain: true)
                return try await outbox.record(marks, for: job, under: claim, at: clock.now)
            }
            before.sent = Array(there)
            pending.removeAll { there.contains($0.id) }
            if !there.isEmpty { logger.info("\(there.count) listens had reached \(job.target.name) already") }
        }
        guard !pending.isEmpty else { return try await outbox.record(before, for: job, under: claim, at: clock.now) }
        // Uncertain from here until the outcome is written: a sender killed
        // mid-send leaves them to be asked about, never sent blindly again.
        before.sending = pending.map(\.id)
        _ = try await outbox.record(before, for: job, under: claim, at: clock.now)
        let after: OutboxMarks
        switch await upstream.send(pending, as: choice) {
        case .delivered(let ignored):
            var marks = OutboxMarks(sent: pending.map(\.id).filter { ignored[$0] == nil })
            for (reason, group) in Dictionary(grouping: ignored.keys, by: { ignored[$0]! }) {
                marks.failed.append(OutboxMarks.Failed(ids: group.sorted(), reason: reason, uncertain: false))
            }
            after = marks
        case .retry(let reason, let wait, let uncertain):
            after = retry(pending, reason: reason, after: wait, uncertain: uncertain)
        case .refused(let reason):
            after = OutboxMarks(failed: [OutboxMarks.Failed(ids: pending.map(\.id), reason: reason, uncertain: false)])
        }
        // Written even when the server began to stop during the send (a
        // cancelled task's database calls would refuse to start).
        let outbox = self.outbox, now = clock.now
        return try await Task { try await outbox.record(after, for: job, under: claim, at: now) }.value
    }

    /// `listens` to try again later, or failed once they have had their tries.
    func retry(_ listens: [OutboxListen], reason: String, after: Duration?, uncertain: Bool) -> OutboxMarks {
        let tries = (listens.map(\.attempts).max() ?? 0) + 1
        let ids = listens.map(\.id)
        if tries >= Self.maxAttempts {
            return OutboxMarks(failed: [OutboxMarks.Failed(ids: ids, reason: "Gave up after \(tries) tries: \(reason)", uncertain: uncertain)])
        }
        let wait = after.map { Double($0.components.seconds) } ?? Self.backoff(afterTries: tries)
        return OutboxMarks(waiting: [OutboxMarks.Waiting(ids: ids, due: clock.now.addingTimeInterval(wait), reason: reason, uncertain: uncertain)])
    }

    /// Seconds before the next try: 5 s doubling per try, at most an hour,
    /// with up to a fifth more at random so a fleet's retries spread out.
    static func backoff(afterTries tries: Int) -> TimeInterval {
        let base = min(3600, 5 * pow(2, Double(max(0, tries - 1))))
        return base + Double.random(in: 0...(base / 5))
    }
}
