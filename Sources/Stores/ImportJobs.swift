import Foundation
import VinylogueCore

/// An export uploaded on the web, waiting to be imported or imported: one
/// row per upload. The file itself waits on the disk of the instance that
/// received it (`machine`), which alone imports it.
public struct ImportJob: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        case queued, importing, done, failed
    }

    public let id: Int64
    /// Whose list and settings it was uploaded from.
    public let owner: ListOwner
    /// Whose archive it goes into.
    public let user: Username
    /// The file's own name, as the person chose it (shown, never used as a path).
    public let fileName: String
    /// Where the upload waits on `machine`'s disk.
    public let path: String
    public let bytes: Int64
    public let machine: String
    public var state: State
    /// What the import did, member by member, as the command line says it.
    public var summary: String?
    /// Why it failed, in words for the person.
    public var reason: String?
    public var queuedAt: Date
    public var updatedAt: Date
    /// What an earlier run of this import stored before it was cut off.
    public var stored: StoredBatches

    public init(id: Int64, owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
                state: State, summary: String? = nil, reason: String? = nil, queuedAt: Date, updatedAt: Date,
                stored: StoredBatches = StoredBatches()) {
        self.id = id
        self.owner = owner
        self.user = user
        self.fileName = fileName
        self.path = path
        self.bytes = bytes
        self.machine = machine
        self.state = state
        self.summary = summary
        self.reason = reason
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
        self.stored = stored
    }

    public var isUnfinished: Bool { state == .queued || state == .importing }
}

/// Uploaded exports: one row per upload (`ImportJob`), each imported by a
/// job of the one queue (`JobQueue`, kind `upload`, keyed by the upload's
/// id, for the machine holding the file), queued in the same transaction
/// as the row. The row keeps what the upload is and what came of it; the
/// job's row keeps who imports it. An import taken over reads the file
/// again from the start and skips the batches its earlier run recorded as
/// stored (`StoredBatches`), counting them as its own; the archive's
/// duplicate rule keeps anything else once.
public protocol ImportJobStore: Sendable {
    /// Queues an upload and its import job; returns it with its id.
    func queue(owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
               at now: Date) async throws -> ImportJob
    /// The upload with this id, if it is still kept.
    func upload(_ id: Int64) async throws -> ImportJob?
    /// Marks the upload as being imported (Settings says so).
    func begin(_ id: Int64, at now: Date) async throws
    /// Ends the upload's import: done with `summary`, or failed with `reason`.
    func finish(_ id: Int64, summary: String?, failure reason: String?, at now: Date) async throws
    /// `owner`'s uploads, the newest first, at most `limit`.
    func jobs(of owner: ListOwner, limit: Int) async throws -> [ImportJob]
    /// How many uploads on `machine` wait to be imported or are being imported.
    func waiting(on machine: String) async throws -> Int
}

/// The batches an uploaded export's import has stored, in order, each with
/// its size and what came of it: recorded in the batch's own transaction
/// (`ArchiveWriting.store(_:of:fence:)` under the upload's fence), so an
/// import taken over after a kill skips what is already in and counts it
/// as its own, instead of calling its own earlier rows duplicates.
public struct StoredBatches: Sendable, Hashable {
    /// One stored batch.
    public struct Batch: Sendable, Hashable {
        /// How many scrobbles it held.
        public let size: Int
        public let counts: InsertCounts

        public init(size: Int, counts: InsertCounts) {
            self.size = size
            self.counts = counts
        }
    }

    public var batches: [Batch]

    public init(_ batches: [Batch] = []) { self.batches = batches }

    /// The form a job's row keeps: `size:inserted:duplicates;` per batch.
    public var text: String { batches.map(Self.entry).joined() }

    /// One batch's entry, appended to the row as it is stored.
    public static func entry(_ batch: Batch) -> String { "\(batch.size):\(batch.counts.inserted):\(batch.counts.duplicates);" }

    /// Reads the row's text; an entry that does not read ends the list
    /// there (the batches after it are stored again, and only meet the
    /// duplicate rule).
    public init(text: String) {
        var batches: [Batch] = []
        for entry in text.split(separator: ";") {
            let parts = entry.split(separator: ":").compactMap { Int($0) }
            guard parts.count == 3, parts.allSatisfy({ $0 >= 0 }) else { break }
            batches.append(Batch(size: parts[0], counts: InsertCounts(inserted: parts[1], duplicates: parts[2])))
        }
        self.batches = batches
    }
}
