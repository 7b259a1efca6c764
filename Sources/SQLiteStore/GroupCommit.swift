import Foundation
import Stores
import GRDB
import Synchronization

/// Runs small writes that arrive together in one shared transaction, each
/// in a savepoint of its own, so that many of them share one commit (and
/// its `fdatasync`: SQLite's writer waits on the disk at every commit).
///
/// Each caller still hears back only once its write is on disk: the
/// continuation of every write in a group resumes after the group's
/// `COMMIT` returns. A write that throws is rolled back to its savepoint
/// and only its caller hears the error; the others in its group commit.
/// When the transaction itself fails (the commit, or an error that makes
/// SQLite abandon the transaction), every write of the group hears it and
/// none of them is stored.
///
/// Groups form by themselves: the first write starts a job on GRDB's
/// writer queue, and whatever arrives while that job waits or commits goes
/// into the next one. With one caller at a time nothing waits for company;
/// with 64 at once their commits are shared. Each group is a job of its own
/// on the writer queue, so other writers (a sync, the settings) take turns
/// with it instead of waiting for a stream of groups to end. The work runs
/// on GRDB's writer queue, never on Swift's cooperative pool.
public final class GroupCommit: Sendable {
    private let writer: any DatabaseWriter
    /// The most writes one transaction takes, so a flood of them still
    /// commits (and answers) regularly.
    let maxWritesPerGroup: Int
    private let state = Mutex(State())

    private struct State {
        var pending: [Write] = []
        /// Whether a job for the pending writes is on the writer queue.
        var scheduled = false
    }

    /// One caller's write: `run` performs it inside the shared transaction
    /// and returns what to tell its caller once the transaction's fate is
    /// known (`nil`: committed); `abandon` tells the caller its write never ran.
    private struct Write: Sendable {
        let run: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        let abandon: @Sendable (any Error) -> Void
    }

    public init(writer: any DatabaseWriter, maxWritesPerGroup: Int = 256) {
        self.writer = writer
        self.maxWritesPerGroup = max(1, maxWritesPerGroup)
    }

    /// Performs `body` in a savepoint of a transaction it may share with
    /// other writes, and returns its result once that transaction is committed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let write = Write(run: { db in
                do {
                    var written: T?
                    try db.inSavepoint {
                        written = try body(db)
                        return .commit
                    }
                    let result = written!
                    return { failure in
                        if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: result) }
                    }
                } catch {
                    return { _ in continuation.resume(throwing: error) }
                }
            }, abandon: { continuation.resume(throwing: $0) })
            let schedule = state.withLock { state in
                state.pending.append(write)
                guard !state.scheduled else { return false }
                state.scheduled = true
                return true
            }
            if schedule { scheduleGroup() }
        }
    }

    /// How many writes wait for the next group (for tests that need a group to have formed).
    var waitingWrites: Int { state.withLock { $0.pending.count } }

    private func scheduleGroup() {
        writer.asyncWriteWithoutTransaction { db in self.commitGroup(in: db) }
    }

    /// Takes the waiting writes (up to the limit), runs them in one
    /// transaction, tells each caller, and schedules the next group if more
    /// arrived meanwhile.
    private func commitGroup(in db: Database) {
        let group: [Write] = state.withLock { state in
            let taken = Array(state.pending.prefix(maxWritesPerGroup))
            state.pending.removeFirst(taken.count)
            return taken
        }
        var outcomes: [@Sendable ((any Error)?) -> Void] = []
        outcomes.reserveCapacity(group.count)
        do {
            try db.inTransaction(.immediate) {
                // An error such as SQLITE_FULL can end the whole transaction:
                // GRDB then fails every later statement and the commit, so
                // the writes before it hear that they were not stored.
                for write in group { outcomes.append(write.run(db)) }
                return .commit
            }
            for outcome in outcomes { outcome(nil) }
        } catch {
            for (index, write) in group.enumerated() {
                if index < outcomes.count { outcomes[index](error) } else { write.abandon(error) }
            }
        }
        let more = state.withLock { state in
            if state.pending.isEmpty { state.scheduled = false }
            return state.scheduled
        }
        if more { scheduleGroup() }
    }
}
