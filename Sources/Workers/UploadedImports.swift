import Foundation
import Imports
import Stores
import VinylogueCore

/// Imports the exports people upload on the web, in the background: each
/// upload is a row (`ImportJobStore`) and a job of the one queue (kind
/// `upload`) that only the instance whose disk holds the file runs, taken
/// over after a crash (a second run skips what the first stored). The
/// importer is the command line's (`ScrobbleImporter`), on a thread of its
/// own; its summary, member by member, is kept with the upload for
/// Settings to show, and the file is deleted once it is read.
public final class UploadedImports: JobHandler {
    public let jobs: any ImportJobStore
    let archive: any ArchiveWriting
    let clock: WallClock
    /// Where uploads wait (a directory of the data directory).
    public let directory: URL
    public let machine: String
    /// Tells the job runner an upload is queued.
    let wakeup: Wakeup
    /// Told when an import stored listens.
    let changes: ListeningChanges?

    public init(jobs: any ImportJobStore, archive: any ArchiveWriting, clock: WallClock, directory: URL, wakeup: Wakeup,
                changes: ListeningChanges? = nil, machine: String = JobHolder.machine()) {
        self.jobs = jobs
        self.changes = changes
        self.archive = archive
        self.clock = clock
        self.directory = directory
        self.wakeup = wakeup
        self.machine = machine
    }

    public var kind: JobKind { .upload }

    /// A new path for an upload named `fileName`, keeping its extension
    /// (the importer reads some formats by it).
    public func newUploadPath(for fileName: String) -> URL {
        let ext = (fileName as NSString).pathExtension.lowercased()
        let kept = !ext.isEmpty && ext.count <= 8 && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? "." + ext : ""
        return directory.appendingPathComponent("\(UUID().uuidString.lowercased())\(kept)")
    }

    /// Queues an upload saved at `path` and wakes the runner.
    public func queue(_ path: URL, fileName: String, bytes: Int64, for user: Username, owner: ListOwner) async throws -> ImportJob {
        let job = try await jobs.queue(owner: owner, user: user, fileName: fileName, path: path.path, bytes: bytes, machine: machine,
                                       at: clock.now)
        wakeup.signal()
        return job
    }

    /// Imports the upload the claimed job names.
    public func run(_ claim: JobClaim) async -> JobEnding {
        guard let id = Int64(claim.job.key), let upload = try? await jobs.upload(id) else {
            // Its upload was deleted with the account: nothing to import.
            return .failed(reason: "The upload is no longer kept.")
        }
        guard upload.isUnfinished else { return .done }
        try? await jobs.begin(id, at: clock.now)
        var importer = ScrobbleImporter(store: archive, clock: clock)
        importer.fence = JobFence(.upload(job: claim.job.id, upload: id), holder: claim.holder)
        importer.earlier = upload.stored
        let (summary, failure) = await Self.run(upload, importer: importer)
        // What it stored shows at once (batches of a stopped or failed run too).
        await changes?.changed(.listens(upload.user))
        if Task.isCancelled, failure != nil {
            // Stopped with the server: the job waits for the next start.
            return .stopped
        }
        // Written even when the server began to stop as the import ended
        // (a cancelled task's database calls would refuse to start).
        let jobs = self.jobs, now = clock.now
        await Task { try? await jobs.finish(id, summary: summary, failure: failure, at: now) }.value
        try? FileManager.default.removeItem(atPath: upload.path)
        return failure.map { .failed(reason: $0) } ?? .done
    }

    /// Runs the importer on `job`'s file: the summary to keep, and why
    /// nothing was imported when nothing was.
    static func run(_ job: ImportJob, importer: ScrobbleImporter) async -> (summary: String?, failure: String?) {
        let summary: ImportSummary
        do {
            summary = try await DedicatedThread.run(named: "vinylogue.upload") { try importer.importFile(at: job.path, for: job.user) }
        } catch {
            let error = error as? SourceError ?? StorageFailure.failure(error)
            return (nil, error.message.replacingOccurrences(of: job.path, with: job.fileName))
        }
        let report = summary.report(for: job.user, printable: Self.printable)
        let name = "“\(Self.printable(job.fileName))”"
        if !summary.isCollection, !summary.unrecognised.isEmpty {
            return (report, "\(name) is not an export Vinylogue recognises, so nothing was imported. It reads \(ExportFormat.known).")
        }
        if summary.isCollection, summary.imported + summary.duplicates == 0, !summary.refused.isEmpty {
            return (report, "Nothing was imported from \(name): files in it are damaged or too large (listed below). "
                + "Download the export again and upload it once more.")
        }
        if summary.imported + summary.duplicates == 0, summary.rejectedCount == 0 {
            return (report, "No listening history was found in \(name), so nothing was imported. Vinylogue reads \(ExportFormat.known).")
        }
        if summary.imported + summary.duplicates == 0 {
            return (report, "No scrobbles could be read from \(name): every line was rejected (listed below). "
                + "Check that it is a complete export.")
        }
        return (report, nil)
    }

    /// The export's own bytes made safe to show: control characters as
    /// `\u{…}` escapes (the page escapes HTML itself).
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control && scalar != "\n" ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined())
    }
}
