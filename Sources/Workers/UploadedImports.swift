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
    /// Where a Vinylogue export's album choices (`vinylogue/albums.json`)
    /// are brought back, as `vinylogue import` brings them back.
    let albums: (any AlbumChoices)?

    public init(jobs: any ImportJobStore, archive: any ArchiveWriting, clock: WallClock, directory: URL, wakeup: Wakeup,
                changes: ListeningChanges? = nil, albums: (any AlbumChoices)? = nil, machine: String = JobHolder.machine()) {
        self.jobs = jobs
        self.albums = albums
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
        let fence = importer.fence
        let result = await Self.run(upload, importer: importer)
        var summary = result.summary
        let failure = result.failure
        if failure == nil, !Task.isCancelled, let imported = result.imported, let albums {
            do throws(SourceError) {
                if let note = try await Self.bringBack(imported, of: upload.user, into: albums, at: clock.now, fence: fence) {
                    summary = (summary ?? "") + note
                    wakeup.signal()
                }
            } catch {
                // Deleted meanwhile (the fence), or the database failed: the
                // listens are in; the choices are said not to be.
                if case .cancelled = error { return .done }
                summary = (summary ?? "") + "\nThe album choices in the export could not be brought back: \(error.message) "
                    + "Make them again on your album pages or in Settings.\n"
            }
        }
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

    /// A Vinylogue export's album choices made again for `user` under the
    /// upload's fence (their weeks queued to be counted): a line for the
    /// summary when any changed, else nil.
    static func bringBack(_ summary: ImportSummary, of user: Username, into albums: any AlbumChoices, at now: Date,
                          fence: JobFence?) async throws(SourceError) -> String? {
        var switched = false, made = 0
        if let folding = summary.albumFolding {
            switched = try await albums.chooseAlbumFolding(folding, of: user, at: now, fence: fence)
        }
        for change in summary.albumChoices where try await albums.changeAlbums(change, of: user, at: now, fence: fence) { made += 1 }
        guard switched || made > 0 else { return nil }
        var note = "\n"
        if switched, let folding = summary.albumFolding {
            note += folding.foldsEditions ? "As the export says, editions of an album count as one album.\n"
                : "As the export says, each spelling of an album counts as its own album.\n"
        }
        if made > 0 { note += "As the export says, \(made == 1 ? "one album was" : "\(made) albums were") kept apart or joined.\n" }
        return note + "Your charts are being counted again; it takes a few seconds.\n"
    }

    /// Runs the importer on `job`'s file: the summary to keep, why nothing
    /// was imported when nothing was, and what the importer found.
    static func run(_ job: ImportJob, importer: ScrobbleImporter) async -> (summary: String?, failure: String?, imported: ImportSummary?) {
        let summary: ImportSummary
        do {
            summary = try await DedicatedThread.run(named: "vinylogue.upload") { try importer.importFile(at: job.path, for: job.user) }
        } catch {
            let error = error as? SourceError ?? StorageFailure.failure(error)
            return (nil, error.message.replacingOccurrences(of: job.path, with: job.fileName), nil)
        }
        let report = summary.report(for: job.user, printable: Self.printable)
        let name = "“\(Self.printable(job.fileName))”"
        if !summary.isCollection, !summary.unrecognised.isEmpty {
            return (report, "\(name) is not an export Vinylogue recognises, so nothing was imported. It reads \(ExportFormat.known).", summary)
        }
        if summary.isCollection, summary.imported + summary.duplicates == 0, !summary.refused.isEmpty {
            return (report, "Nothing was imported from \(name): files in it are damaged or too large (listed below). "
                + "Download the export again and upload it once more.", summary)
        }
        if summary.imported + summary.duplicates == 0, summary.rejectedCount == 0 {
            return (report, "No listening history was found in \(name), so nothing was imported. Vinylogue reads \(ExportFormat.known).", summary)
        }
        if summary.imported + summary.duplicates == 0 {
            return (report, "No scrobbles could be read from \(name): every line was rejected (listed below). "
                + "Check that it is a complete export.", summary)
        }
        return (report, nil, summary)
    }

    /// The export's own bytes made safe to show: control characters as
    /// `\u{…}` escapes (the page escapes HTML itself).
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control && scalar != "\n" ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined())
    }
}
