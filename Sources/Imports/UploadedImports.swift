import Foundation
import Stores
import VinylogueCore

/// Imports the exports people upload on the web, in the background, one
/// at a time: each upload is a durable job (`ImportJobStore`) claimed with
/// a lease by the instance whose disk holds the file, and taken over after
/// a crash (a second run stores nothing twice: the archive's duplicate
/// rule). The importer is the command line's (`ScrobbleImporter`), on a
/// thread of its own; its summary, member by member, is kept with the job
/// for Settings to show, and the file is deleted once it is read.
public final class UploadedImports: Sendable {
    public let jobs: any ImportJobStore
    let archive: any ScrobbleArchive
    let clock: WallClock
    /// Where uploads wait (a directory of the data directory).
    public let directory: URL
    public let machine: String
    let lease: TimeInterval
    let poll: Duration
    private let wakeup = Wakeup()

    public init(jobs: any ImportJobStore, archive: any ScrobbleArchive, clock: WallClock, directory: URL,
                machine: String = JobHolder.machine(), lease: TimeInterval = 120, poll: Duration = .seconds(30)) {
        self.jobs = jobs
        self.archive = archive
        self.clock = clock
        self.directory = directory
        self.machine = machine
        self.lease = lease
        self.poll = poll
    }

    /// A new path for an upload named `fileName`, keeping its extension
    /// (the importer reads some formats by it).
    public func newUploadPath(for fileName: String) -> URL {
        let ext = (fileName as NSString).pathExtension.lowercased()
        let kept = !ext.isEmpty && ext.count <= 8 && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? "." + ext : ""
        return directory.appendingPathComponent("\(UUID().uuidString.lowercased())\(kept)")
    }

    /// Queues an upload saved at `path` and wakes the worker.
    public func queue(_ path: URL, fileName: String, bytes: Int64, for user: Username, owner: ListOwner) async throws -> ImportJob {
        let job = try await jobs.queue(owner: owner, user: user, fileName: fileName, path: path.path, bytes: bytes, machine: machine,
                                       at: clock.now)
        wakeup.signal()
        return job
    }

    /// Imports what is queued on this machine until cancelled.
    public func run() async {
        while !Task.isCancelled {
            while !Task.isCancelled, await importNext() {}
            await wakeup.wait(atMost: poll)
        }
    }

    /// Claims and imports one upload; false when none waited.
    @discardableResult
    public func importNext() async -> Bool {
        let holder = JobHolder.name()
        guard let job = try? await jobs.claimNext(on: machine, as: holder, at: clock.now, lease: lease,
                                                   takingOverFrom: JobHolder.isGone) else { return false }
        // The lease is renewed while the import runs, however long it takes.
        let jobs = self.jobs, clock = self.clock, lease = self.lease
        let renewal = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(max(1, lease / 3)))
                _ = try? await jobs.renew(job.id, as: holder, at: clock.now, lease: lease)
            }
        }
        var importer = ScrobbleImporter(store: archive, clock: clock)
        importer.fence = JobFence(.upload(id: job.id), holder: holder)
        importer.earlier = job.stored
        let (summary, failure) = await Self.run(job, importer: importer)
        renewal.cancel()
        if Task.isCancelled, failure != nil {
            // Stopped with the server: the job waits for the next start.
            return true
        }
        _ = try? await jobs.finish(job.id, as: holder, summary: summary, failure: failure, at: clock.now)
        try? FileManager.default.removeItem(atPath: job.path)
        return true
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
