import Stores
import Foundation
import Logging
import PostgresNIO
import Synchronization
import VinylogueCore

/// Listens that players send at the same moment, kept together: the keeps
/// that arrive while a group is being written wait for it, then go in the
/// next group, one transaction in which each step is one statement for all
/// of them (the tokens' holders, the people's ids and locks, each round of
/// the duplicate rule's reads, the new rows, the kept charts' counts, reads
/// and rows, the fleet's notices, the forwarding choices, the outbox).
///
/// What a keep alone cost (about a dozen round trips and a commit), 64
/// people's keeps now cost together. Each caller hears back once the
/// group's commit has returned, that is once its listens are on disk
/// (`synchronous_commit` on). With one caller at a time nothing waits for
/// company.
///
/// A person with two keeps in one group has them stored one after the
/// other in that transaction, as two requests would be. When a group's
/// transaction fails, nothing of it is stored and each of its keeps is
/// written again alone, so a keep that cannot be stored fails only its own
/// caller. At most `groupsAtOnce` groups are written at once, on as many
/// pooled connections; the people's locks are taken in the order of their
/// ids, so groups that share people (here or on other instances) wait for
/// each other rather than deadlock.
final class PostgresListenGroups: Sendable {
    /// One caller's keep, and where its answer goes.
    struct Keep: Sendable {
        let keep: ListenKeep
        let answer: CheckedContinuation<KeptListens?, any Error>
    }

    private let client: PostgresClient
    private let logger: Logger
    /// The most keeps one group takes, so a flood of them still commits
    /// (and answers) regularly.
    let keepsPerGroup: Int
    let groupsAtOnce: Int
    private let state = Mutex(State())

    private struct State {
        var waiting: [Keep] = []
        var writing = 0
        var groupsTaken = 0
        var largestGroup = 0
        var watchers: [Watcher] = []

        /// The watchers whose condition now holds, removed.
        mutating func satisfied() -> [Watcher] {
            let now = (waiting: waiting.count, groupsTaken: groupsTaken)
            let met = watchers.filter { $0.condition(now) }
            watchers.removeAll { $0.condition(now) }
            return met
        }
    }

    /// Someone waiting for the groups to reach a state (tests do).
    private struct Watcher: Sendable {
        let condition: @Sendable ((waiting: Int, groupsTaken: Int)) -> Bool
        let wake: CheckedContinuation<Void, Never>
    }

    /// Returns once `condition` holds of how many keeps wait and how many
    /// groups have been taken: an event, for tests that need a group to
    /// have formed.
    func wait(until condition: @escaping @Sendable ((waiting: Int, groupsTaken: Int)) -> Bool) async {
        await withCheckedContinuation { (wake: CheckedContinuation<Void, Never>) in
            let met = state.withLock { state in
                state.watchers.append(Watcher(condition: condition, wake: wake))
                return state.satisfied()
            }
            for watcher in met { watcher.wake.resume() }
        }
    }

    /// The most keeps one group has taken so far.
    var largestGroup: Int { state.withLock { $0.largestGroup } }

    init(client: PostgresClient, logger: Logger, keepsPerGroup: Int = 128, groupsAtOnce: Int = 4) {
        self.client = client
        self.logger = logger
        self.keepsPerGroup = max(1, keepsPerGroup)
        self.groupsAtOnce = max(1, groupsAtOnce)
    }

    /// Keeps `listens` for their sender in the next group: stored by the
    /// duplicate rule with the kept weekly charts, and queued for each
    /// service among `available` the sender's owner forwards to. Returns
    /// the sender and how many outbox rows were added, or nil when the
    /// token's holder may not send them (nothing stored).
    func keep(_ listens: [ListenToForward], from sender: ListenFrom, forwardingAmong available: Set<ForwardingTarget>,
              at now: Date) async throws -> KeptListens? {
        try await keep(ListenKeep(listens, from: sender, forwardingAmong: available, at: now))
    }

    /// Keeps `keep` in the next group.
    func keep(_ keep: ListenKeep) async throws -> KeptListens? {
        try await withCheckedThrowingContinuation { (answer: CheckedContinuation<KeptListens?, any Error>) in
            let (start, met) = state.withLock { state in
                state.waiting.append(Keep(keep: keep, answer: answer))
                guard state.writing < groupsAtOnce else { return (false, state.satisfied()) }
                state.writing += 1
                return (true, state.satisfied())
            }
            for watcher in met { watcher.wake.resume() }
            // The writer outlives no caller: it ends when nothing waits.
            if start { Task { await self.writeWhileWaiting() } }
        }
    }

    /// Writes groups until no keep waits.
    private func writeWhileWaiting() async {
        while true {
            let (group, met): ([Keep], [Watcher]) = state.withLock { state in
                let taken = Array(state.waiting.prefix(keepsPerGroup))
                state.waiting.removeFirst(taken.count)
                if taken.isEmpty {
                    state.writing -= 1
                } else {
                    state.groupsTaken += 1
                    state.largestGroup = max(state.largestGroup, taken.count)
                }
                return (taken, state.satisfied())
            }
            for watcher in met { watcher.wake.resume() }
            guard !group.isEmpty else { return }
            await write(group)
        }
    }

    /// One transaction for `group`; when it fails, each keep alone.
    private func write(_ group: [Keep]) async {
        do {
            let logger = self.logger
            let answers = try await client.withTransaction(logger: logger) { connection in
                try await Self.keep(group, connection, logger)
            }
            for (keep, answer) in zip(group, answers) { keep.answer.resume(returning: answer) }
        } catch {
            guard group.count > 1 else {
                group[0].answer.resume(throwing: error)
                return
            }
            await withTaskGroup(of: Void.self) { alone in
                for keep in group { alone.addTask { await self.write([keep]) } }
            }
        }
    }

    /// Keeps `group` in the caller's transaction, each step of `ListenWrite`
    /// one statement for the whole group.
    static func keep(_ group: [Keep], _ connection: PostgresConnection, _ logger: Logger) async throws -> [KeptListens?] {
        var write = ListenWrite(group.map(\.keep))
        while true {
            switch write.next() {
            case .readHolders(let digests):
                write.heard(holders: try await PostgresListenTokenStore.holders(ofTokens: digests, connection, logger))
            case .readChoices(let owners):
                write.heard(choices: try await PostgresForwardingOutbox.choices(of: owners, connection, logger))
            case .queueJobs(let jobs, let now):
                try await PostgresForwardingOutbox.queueJobs(jobs, at: now, connection, logger)
            case .findPeople(let people):
                write.heard(ids: try await PostgresScrobbleStore.lockedUserIDs(of: people, connection, logger))
            case .store(let batches):
                _ = try await PostgresScrobbleStore.store(batches, connection, logger)
            case .announce(let notices):
                try await PostgresFleetNotices.announce(notices, connection, logger)
            case .enqueue(let entries, let now):
                write.heard(queued: try await PostgresForwardingOutbox.enqueue(entries, at: now, connection, logger))
            case .finished(let answers):
                return answers
            }
        }
    }
}
