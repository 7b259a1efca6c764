import Foundation
import VinylogueCore

/// The claim a job writes under, checked by each of its writes inside the
/// write's own transaction: a history copy's page, an uploaded import's
/// batch. The job's row must still be claimed by `holder` and running;
/// when it is not — the person deleted their account or what was copied,
/// stopped the copy, or another worker took the job over — the write
/// throws `SourceError.cancelled` and its transaction stores nothing.
///
/// Why in the transaction and not before it: a deletion can commit between
/// a job's last look and its write. Checked inside, the two are ordered by
/// the database (SQLite's one writer; on PostgreSQL the check locks the
/// job's row `FOR SHARE`, which the deletion's `DELETE` or the stop's
/// `UPDATE` must wait for, and the person's archive lock), so either the
/// write lands first and the deletion removes it, or the deletion lands
/// first and the write finds no claim. Nothing lands after a deletion.
public struct JobFence: Sendable, Hashable {
    /// Which job's row is the fence.
    public enum Job: Sendable, Hashable {
        /// A copy of this person's history: its job in the one queue.
        case historyCopy(job: Int64, of: Username)
        /// A job of the one queue (`JobQueue`'s row).
        case job(id: Int64)
        /// An uploaded export's import: the queue's row `job` is the
        /// fence, and each batch stored is recorded on the upload's row
        /// `upload` (`StoredBatches`).
        case upload(job: Int64, upload: Int64)
    }

    public let job: Job
    /// The claim's holder, as the job's row names it while it runs.
    public let holder: String

    public init(_ job: Job, holder: String) {
        self.job = job
        self.holder = holder
    }

    /// The fence of a claimed history copy.
    public init(_ claim: CopyClaim) {
        self.init(.historyCopy(job: claim.job.job.id, of: claim.user), holder: claim.holder)
    }

    /// The job's row, for a backend's check: its table, the column and
    /// value that find it, and the state it has while it runs. The check
    /// is `SELECT 1 FROM table WHERE column = key AND holder = ? AND state = running`.
    public var row: (table: String, column: String, key: Key, running: String) {
        switch job {
        case .historyCopy(let id, _), .job(let id), .upload(let id, _): ("job", "id", .integer(id), DurableJob.State.running.rawValue)
        }
    }

    /// A row's key, typed for binding.
    public enum Key: Sendable, Hashable {
        case text(String)
        case integer(Int64)
    }

    /// What a write found fenced says to its job.
    public var cancellation: SourceError {
        switch job {
        case .historyCopy(_, let user): .cancelled(job: "The copy of \(user.value)'s history")
        case .upload: .cancelled(job: "The import of the uploaded export")
        case .job: .cancelled(job: "The work")
        }
    }
}

extension JobFence {
    /// Where a batch written under this fence records itself, in the
    /// batch's own transaction: an uploaded export's row
    /// (`import_job.stored_batches`, read back as `StoredBatches`) and the
    /// entry to append for `size` listens stored with `counts`; nil for
    /// any other job. Both stores' `ArchiveWriting.store` ask it.
    public func storedBatch(size: Int, counts: InsertCounts) -> (upload: Int64, entry: String)? {
        guard case .upload(_, let upload) = job else { return nil }
        return (upload, StoredBatches.entry(.init(size: size, counts: counts)))
    }
}
