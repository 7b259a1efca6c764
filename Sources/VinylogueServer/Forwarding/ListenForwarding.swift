import Stores
import Sync
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import VinylogueCore

/// Forwards received listens to Last.fm and ListenBrainz through the
/// durable outbox (`ForwardingOutbox`), as a service of the server.
///
/// A listen is in the outbox before its player hears "ok", so a crash
/// loses none. The sender claims one owner's due listens for one service,
/// sends them, and records what happened: sent; waiting, with a backoff
/// (5 s doubling to an hour, or the service's own "retry after") and the
/// reason; or failed, with the reason, when the credentials are refused,
/// the service ignores a listen for good, or 20 tries have failed.
///
/// Never twice: a send whose fate is unknown (a timeout, a cut connection,
/// an unreadable answer, or a sender killed mid-send, whose claim runs out)
/// leaves its listens uncertain, and before they are sent again the
/// service is asked which of them it has (`ForwardingUpstream.arrived`).
public final class ListenForwarding: Service, Sendable {
    let outbox: any ForwardingOutbox
    /// The services it forwards to.
    public let upstreams: [any ForwardingUpstream]
    private let byTarget: [ForwardingTarget: any ForwardingUpstream]
    let clock: WallClock
    let logger: Logger
    /// How long a claim lasts: longer than any one send can take.
    let lease: TimeInterval
    /// Tries before a listen counts as failed.
    static let maxAttempts = 20
    private let wakeup = Wakeup()
    /// "Now playing" to pass on, newest kept when the services are slow.
    private let playing = AsyncStream.makeStream(of: (listen: ListenToForward, owner: ListOwner).self, bufferingPolicy: .bufferingNewest(64))

    public init(outbox: any ForwardingOutbox, upstreams: [any ForwardingUpstream], clock: WallClock, lease: TimeInterval = 120,
                logger: Logger = Logger(label: "vinylogue.forwarding")) {
        self.outbox = outbox
        self.upstreams = upstreams
        self.byTarget = Dictionary(upstreams.map { ($0.target, $0) }, uniquingKeysWith: { first, _ in first })
        self.clock = clock
        self.lease = lease
        self.logger = logger
    }

    /// The services this server can forward to.
    public var targets: Set<ForwardingTarget> { Set(byTarget.keys) }

    /// Puts `listens`, received for `owner`, in the outbox for each service
    /// the owner forwards to, and wakes the sender. Throws when the outbox
    /// cannot be written: then the player must be told to send them again.
    public func enqueue(_ listens: [ListenToForward], of owner: ListOwner) async throws {
        let targets = try await outbox.choice(of: owner).targets.intersection(byTarget.keys)
        guard !targets.isEmpty, !listens.isEmpty else { return }
        if try await outbox.enqueue(listens, of: owner, to: targets, at: clock.now) > 0 { wakeup.signal() }
    }

    /// Whose ListenBrainz `token` is, asked of ListenBrainz before it is kept.
    public func checkListenBrainzToken(_ token: String) async -> Result<String, SourceError> {
        guard let upstream = byTarget[.listenBrainz] as? any TokenCheckingUpstream else {
            return .failure(.notFound(what: "Forwarding to ListenBrainz"))
        }
        do {
            return .success(try await upstream.owner(ofToken: token))
        } catch {
            return .failure(error)
        }
    }

    /// Wakes the sender (after failed listens are put back in line).
    public func wake() { wakeup.signal() }

    /// Passes on that `owner` plays `listen` now to each service they
    /// forward to, in the background: the player does not wait for the
    /// services, and nothing is kept (a "now playing" that fails is over by
    /// the time it could be sent again; the failure is logged).
    public func playingNow(_ listen: ListenToForward, of owner: ListOwner) {
        playing.continuation.yield((listen, owner))
    }

    public func run() async throws {
        do {
            try await outbox.releaseOrphanedClaims()
        } catch {
            logger.warning("could not take back the outbox's old claims: \(error)")
        }
        let stopping = Mutex(false)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await (listen, owner) in self.playing.stream { await self.sendPlayingNow(listen, of: owner) }
                }
                while !Task.isCancelled, !stopping.withLock({ $0 }) {
                    if await sendDue() == 0 { await waitForWork() }
                }
                self.playing.continuation.finish()
            }
        } onGracefulShutdown: {
            stopping.withLock { $0 = true }
            self.wakeup.signal()
            self.playing.continuation.finish()
        }
    }

    /// Tells each service `owner` forwards to that they play `listen` now.
    func sendPlayingNow(_ listen: ListenToForward, of owner: ListOwner) async {
        let choice: ForwardingChoice
        do {
            choice = try await outbox.choice(of: owner)
        } catch {
            logger.info("a now playing was not passed on: the forwarding choices could not be read (\(error))")
            return
        }
        for target in choice.targets.intersection(byTarget.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
            do {
                try await byTarget[target]?.playingNow(listen, as: choice)
            } catch {
                logger.info("a now playing was not passed on to \(target.rawValue): \(error.message)")
            }
        }
    }

    /// Sends everything due now, batch by batch; returns how many batches.
    @discardableResult
    public func sendDue() async -> Int {
        var batches = 0
        while !Task.isCancelled, await sendOne() { batches += 1 }
        return batches
    }

    /// Claims and sends one batch; false when nothing was due (or the
    /// outbox could not be read).
    func sendOne() async -> Bool {
        let byTarget = self.byTarget
        let batch: OutboxBatch?
        do {
            batch = try await outbox.claim(at: clock.now, lease: lease) { byTarget[$0]?.batchLimit ?? 50 }
        } catch {
            logger.warning("could not read the forwarding outbox: \(error)")
            return false
        }
        guard let batch else { return false }
        do {
            try await forward(batch)
        } catch {
            // The outbox could not record the outcome: the claim runs out and
            // the batch comes back uncertain, to be checked before it is sent.
            logger.warning("could not record a forwarding outcome: \(error)")
        }
        return true
    }

    private func forward(_ batch: OutboxBatch) async throws {
        let ids = batch.listens.map(\.id)
        guard let upstream = byTarget[batch.target] else {
            try await outbox.markWaiting(ids, until: clock.now.addingTimeInterval(3600),
                                         reason: "This server is not set up to forward to \(batch.target.name) now.", uncertain: false)
            return
        }
        let choice = try await outbox.choice(of: batch.owner)
        guard choice.targets.contains(batch.target) else {
            let reason = batch.target == .lastFM
                ? "Forwarding to Last.fm was turned off, or the account is no longer signed in with Last.fm."
                : "The ListenBrainz token was removed."
            try await outbox.markFailed(ids, reason: reason + " Turn it on again, then try the failed ones again.", at: clock.now)
            return
        }
        var pending = batch.listens
        let uncertain = pending.filter(\.uncertain)
        if !uncertain.isEmpty {
            let there: Set<Int64>
            do {
                there = try await upstream.arrived(uncertain, as: choice)
            } catch {
                try await retry(pending, reason: "\(batch.target.name) could not be asked whether earlier listens arrived: \(error.message)",
                                after: nil, uncertain: true)
                return
            }
            try await outbox.markSent(Array(there), at: clock.now)
            try await outbox.markCertain(uncertain.map(\.id).filter { !there.contains($0) })
            pending.removeAll { there.contains($0.id) }
            if !there.isEmpty { logger.info("\(there.count) listens had reached \(batch.target.name) already") }
        }
        guard !pending.isEmpty else { return }
        switch await upstream.send(pending, as: choice) {
        case .delivered(let ignored):
            try await outbox.markSent(pending.map(\.id).filter { ignored[$0] == nil }, at: clock.now)
            for (reason, group) in Dictionary(grouping: ignored.keys, by: { ignored[$0]! }) {
                try await outbox.markFailed(Array(group), reason: reason, at: clock.now)
            }
        case .retry(let reason, let after, let uncertain):
            try await retry(pending, reason: reason, after: after, uncertain: uncertain)
        case .refused(let reason):
            try await outbox.markFailed(pending.map(\.id), reason: reason, at: clock.now)
        }
    }

    private func retry(_ listens: [OutboxListen], reason: String, after: Duration?, uncertain: Bool) async throws {
        let tries = (listens.map(\.attempts).max() ?? 0) + 1
        if tries >= Self.maxAttempts {
            try await outbox.markFailed(listens.map(\.id), reason: "Gave up after \(tries) tries: \(reason)", at: clock.now)
            return
        }
        let wait = after.map { Double($0.components.seconds) } ?? Self.backoff(afterTries: tries)
        try await outbox.markWaiting(listens.map(\.id), until: clock.now.addingTimeInterval(wait), reason: reason, uncertain: uncertain)
    }

    /// Seconds before the next try: 5 s doubling per try, at most an hour,
    /// with up to a fifth more at random so a fleet's retries spread out.
    static func backoff(afterTries tries: Int) -> TimeInterval {
        let base = min(3600, 5 * pow(2, Double(max(0, tries - 1))))
        return base + Double.random(in: 0...(base / 5))
    }

    /// Until the next listen falls due (at most a minute: another instance
    /// may have added some) or one is enqueued here.
    private func waitForWork() async {
        var wait: TimeInterval = 60
        if let due = try? await outbox.nextDue() { wait = min(wait, max(0.05, due.timeIntervalSince(clock.now))) }
        await wakeup.wait(atMost: .milliseconds(Int(wait * 1000)))
    }
}
