import Foundation
import Synchronization
import Stores
import VinylogueCore

/// The state of one import: the batch being filled, the running summary
/// and the member being read.
struct ImportRun {
    let writer: BatchWriter
    let batchSize: Int
    /// The instants this import accepts (`PlausibleTime.range(now:)`).
    let plausible: ClosedRange<Int64>
    let progress: (ImportProgress) -> Void
    var summary = ImportSummary()
    var totalBytes: Int64 = 0
    var bytesRead: Int64 = 0
    var batch: [(Scrobble, ScrobbleOrigin)] = []
    /// The member being read and the writer's counts when it began.
    private var member: MemberSummary?
    private var listedName: String?
    private var countsBefore = InsertCounts()

    init(writer: BatchWriter, batchSize: Int, plausible: ClosedRange<Int64>, progress: @escaping (ImportProgress) -> Void) {
        self.writer = writer
        self.batchSize = batchSize
        self.plausible = plausible
        self.progress = progress
    }

    /// Starts a member; `listed` is the name rejections carry (`nil` for a single file).
    mutating func beginMember(_ name: String, listed: String?) {
        member = MemberSummary(name: name, outcome: .skipped(MemberSummary.notRecognised))
        listedName = listed
        countsBefore = writer.counts
    }

    /// The member's format is known.
    mutating func began(_ format: ExportFormat) {
        member?.outcome = .read(format)
        if summary.format == nil { summary.format = format }
    }

    mutating func note(_ text: String) {
        guard var member, !member.notes.contains(text) else { return }
        member.notes.append(text)
        self.member = member
        if !summary.notes.contains(text) { summary.notes.append(text) }
    }

    /// Stores what the member left in the batch and records its counts.
    mutating func endMember(_ reader: MemberReader) throws {
        try flush()
        guard var member else { return }
        let counts = try writer.drain()
        member.imported = counts.inserted - countsBefore.inserted
        member.duplicates = counts.duplicates - countsBefore.duplicates
        if reader.isUnrecognised { member.outcome = .skipped(MemberSummary.notRecognised) }
        if reader.wasEmpty { member.outcome = .skipped("it is empty") }
        summary.members.append(member)
        self.member = nil
    }

    /// An empty file: alone, its one line is rejected ("the file is
    /// empty"); in a collection, its member is listed as skipped, empty
    /// (`endMember`), and nothing is rejected.
    mutating func empty() {
        if listedName == nil { reject(1, "the file is empty") }
    }

    /// A member left alone as a whole (not history, damaged, too large).
    mutating func skipMember(_ name: String, _ reason: String, refused: Bool = false) {
        summary.members.append(MemberSummary(name: name, outcome: refused ? .refused(reason) : .skipped(reason)))
    }

    mutating func handle(_ outcome: ListenObjects.Outcome, line: Int) throws {
        switch outcome {
        case .scrobble(let scrobble, let origin): try add(scrobble, origin: origin, line: line)
        case .skipped(let reason):
            summary.skipped[reason, default: 0] += 1
            member?.skipped[reason, default: 0] += 1
        case .rejected(let problem): reject(line, problem.reason)
        case .noted(let text): note(text)
        case .ignored: break
        }
    }

    mutating func add(_ scrobble: Scrobble, origin: ScrobbleOrigin, line: Int) throws {
        guard plausible.contains(scrobble.instant) else {
            return reject(line, PlausibleTime.problem(with: scrobble.instant, in: plausible) ?? "implausible time")
        }
        batch.append((scrobble, origin))
        if batch.count >= batchSize { try flush() }
    }

    mutating func reject(_ line: Int, _ reason: String) {
        summary.rejectedCount += 1
        member?.rejectedCount += 1
        if summary.rejected.count < ScrobbleImporter.rejectionsKept {
            summary.rejected.append(RejectedLine(member: listedName, line: line, reason: reason))
        }
    }

    /// Hands the batch to the writer thread (one transaction per batch),
    /// so parsing the next batch overlaps with storing this one.
    mutating func flush() throws {
        if !batch.isEmpty {
            // Exports run newest first; inserting each batch in ascending
            // order lets SQLite fill B-tree pages instead of splitting
            // them half empty at every step.
            batch.sort { $0.0.instant < $1.0.instant }
            try writer.submit(batch)
            batch.removeAll(keepingCapacity: true)
        }
        let counts = writer.counts
        summary.imported = counts.inserted
        summary.duplicates = counts.duplicates
        progress(ImportProgress(bytesRead: bytesRead, totalBytes: totalBytes, imported: counts.inserted,
                                duplicates: counts.duplicates, rejected: summary.rejectedCount, member: listedName))
    }

    /// Waits for every batch to be stored.
    mutating func finish() throws {
        try flush()
        let counts = try writer.drain()
        summary.imported = counts.inserted
        summary.duplicates = counts.duplicates
        try writer.finish(inserted: counts.inserted)
    }
}

/// Stores batches on a background queue, in submission order, at most two
/// in flight (so memory stays bounded); the first failure stops the import.
/// Its counts follow the archive's duplicate rule (`ArchiveWriting.store`).
final class BatchWriter: Sendable {
    private let store: any ArchiveWriting
    private let user: Username
    /// The uploaded import's claim each batch is stored under, if any.
    private let fence: JobFence?
    private let queue = DispatchQueue(label: "vinylogue.import.writer")
    private let slots = DispatchSemaphore(value: 2)

    private struct Progress {
        var stored = InsertCounts()
        var failure: (any Error)?
        /// What an earlier run stored, batch by batch, still to be met.
        var earlier: ArraySlice<StoredBatches.Batch> = []
    }

    private let progress = Mutex(Progress())

    /// `earlier`: the batches an earlier run of the same job stored; the
    /// first batches, while each is as large as the one recorded in its
    /// place, are not stored again but counted as that run counted them.
    /// The file and the batch size are the same, so the same batches come
    /// in the same order; a batch of another size ends the skipping.
    init(store: any ArchiveWriting, user: Username, fence: JobFence?, earlier: StoredBatches = StoredBatches()) {
        self.store = store
        self.user = user
        self.fence = fence
        progress.withLock { $0.earlier = earlier.batches[...] }
    }

    /// Counts of the batches stored so far.
    var counts: InsertCounts { progress.withLock { $0.stored } }

    func submit(_ batch: [(Scrobble, ScrobbleOrigin)]) throws {
        let storedBefore = progress.withLock { progress -> Bool in
            guard let first = progress.earlier.first else { return false }
            guard first.size == batch.count else {
                progress.earlier = []
                return false
            }
            progress.earlier = progress.earlier.dropFirst()
            progress.stored += first.counts
            return true
        }
        if storedBefore { return }
        slots.wait()
        if let failure = progress.withLock({ $0.failure }) {
            slots.signal()
            throw failure
        }
        queue.async { [self] in
            defer { slots.signal() }
            guard progress.withLock({ $0.failure == nil }) else { return }
            do {
                let counts: InsertCounts
                if let blocking = store as? any BlockingScrobbleWriter {
                    // SQLite writes on this thread: nothing here waits on
                    // Swift's pool, so an import called from it (against
                    // the advice in `importFile`) still finishes.
                    counts = try blocking.storeBlocking(batch, of: user, fence: fence)
                } else {
                    counts = try Self.awaiting { [store, user, fence] () async throws(SourceError) -> InsertCounts in
                        try await store.store(batch, of: user, fence: fence)
                    }
                }
                progress.withLock { $0.stored += counts }
            } catch {
                progress.withLock { $0.failure = error }
            }
        }
    }

    /// Runs `work` and blocks the calling thread (the writer queue's, never
    /// one of Swift's cooperative threads) until it is done.
    private static func awaiting<T: Sendable>(_ work: @escaping @Sendable () async throws(SourceError) -> T) throws(SourceError) -> T {
        let outcome = Mutex<Result<T, SourceError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, SourceError>
            do throws(SourceError) { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Tells the store the import is over (`ArchiveWriting.importFinished`).
    func finish(inserted: Int) throws {
        guard !(store is any BlockingScrobbleWriter) else { return }
        try Self.awaiting { [store] () async throws(SourceError) in try await store.importFinished(inserted: inserted) }
    }

    /// Waits for the queue to drain; throws the first failure.
    func drain() throws -> InsertCounts {
        queue.sync {}
        return try progress.withLock { progress in
            if let failure = progress.failure { throw failure }
            return progress.stored
        }
    }
}
