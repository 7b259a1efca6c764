import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Stores
import VinylogueCore

/// Imports listening exports into the archive for one user: a single
/// export file, a ZIP archive as ListenBrainz or Spotify deliver it, or a
/// directory of either.
///
/// Streams everything in chunks, so memory stays flat whatever the size:
/// files in 1 MiB reads, ZIP members inflated in 1 MiB pieces straight
/// from the archive (never written to disk). Each file or member has its
/// format recognised from its own first bytes (`FormatSniffer`); one that
/// matches no format imports nothing and is named in the summary, never
/// guessed at. Members that are not listening history (ListenBrainz's
/// `user.json` and `feedback.jsonl`, Spotify's video and podcast files) are
/// skipped by name. A ZIP member is first inflated once to check its CRC
/// and its size (at most `maxMemberBytes`), so a damaged member or a ZIP
/// bomb is refused whole, and the other members still import.
///
/// Scrobbles are stored in batches, one transaction each, so a killed
/// import keeps every finished batch and a rerun skips what is already
/// there (`ArchiveWriting.store` makes every batch idempotent and
/// leaves out the same listen from another source). Bad lines are
/// reported with their member and line number and never stop the rest:
/// among them lines over 16 MiB (dropped as they stream past, never held
/// whole) and times outside `PlausibleTime.range(now:)`, read once from
/// `clock` per import. A UTF-8 byte-order mark at the start of any format
/// is skipped.
public struct ScrobbleImporter: Sendable {
    public let store: any ArchiveWriting
    public let clock: WallClock
    public var batchSize: Int
    /// A format named by the person (`--format`), replacing detection.
    public var format: FormatChoice?
    /// The most bytes one ZIP member may inflate to. Real members are tens
    /// of megabytes at most (Spotify splits its history into files of about
    /// 12 MB, ListenBrainz into months); anything past this is refused as a
    /// ZIP bomb before any of it is parsed.
    public var maxMemberBytes: Int64 = 1 << 30
    /// The zone a portable player's clock was set to, for `.scrobbler.log`
    /// files marked `#TZ/UNKNOWN` (`nil`: their times are kept as written, as UTC).
    public var playerTimeZone: TimeZone?
    /// The claim of the job running this import (an uploaded export's):
    /// each batch is stored only while it holds, so an import whose person
    /// was deleted meanwhile stops and stores nothing more (`JobFence`).
    public var fence: JobFence?
    /// What an earlier run of the same job stored before it was cut off:
    /// skipped, and counted as this import's own (`StoredBatches`).
    public var earlier = StoredBatches()
    /// Rejected lines listed one by one in the summary; the rest are counted.
    public static let rejectionsKept = 1000

    public init(store: any ArchiveWriting, clock: WallClock, batchSize: Int = 10_000, format: FormatChoice? = nil,
                playerTimeZone: TimeZone? = nil) {
        self.store = store
        self.clock = clock
        self.batchSize = max(1, batchSize)
        self.format = format
        self.playerTimeZone = playerTimeZone
    }

    /// Imports the file, ZIP archive or directory at `path` for `user`,
    /// calling `progress` after each batch.
    ///
    /// Blocks for as long as the import takes (it reads the file and waits
    /// for its writer queue): from async code, call it inside
    /// `DedicatedThread.run`, never directly on Swift's cooperative pool.
    public func importFile(at path: String, for user: Username,
                           progress: (ImportProgress) -> Void = { _ in }) throws(SourceError) -> ImportSummary {
        do {
            return try withoutActuallyEscaping(progress) { progress in try importing(path, user, progress) }
        } catch let error as SourceError {
            throw error
        } catch {
            throw StorageFailure.failure(error)
        }
    }

    private func importing(_ path: String, _ user: Username, _ progress: @escaping (ImportProgress) -> Void) throws -> ImportSummary {
        var run = ImportRun(writer: BatchWriter(store: store, user: user, fence: fence, earlier: earlier), batchSize: batchSize,
                            plausible: PlausibleTime.range(now: clock.now), progress: progress)
        if let problem = Self.notReadable(path) {
            throw SourceError.unreadableFile(path: path, reason: problem)
        }
        if Self.isDirectory(path) {
            let listing = try Self.files(in: path)
            let files = listing.files
            run.summary.isCollection = true
            var skipped = listing.skipped[...]
            var archives: [(String, ExportArchive)] = []
            var broken: [String: String] = [:]
            for (file, name) in files {
                if ExportArchive.isZIP(file) {
                    // A broken ZIP among other exports is named, not fatal.
                    do {
                        let archive = try ExportArchive(path: file, maxMemberBytes: maxMemberBytes)
                        run.totalBytes += archive.totalBytes
                        archives.append((name, archive))
                    } catch let SourceError.unreadableFile(_, reason) {
                        broken[name] = reason
                    }
                } else {
                    run.totalBytes += Self.size(of: file)
                }
            }
            for (file, name) in files {
                // What was left alone is listed where it lies, among the files read.
                while let next = skipped.first, MemberNames.naturalOrder(next.name, name) {
                    run.skipMember(next.name, next.reason)
                    skipped = skipped.dropFirst()
                }
                if let reason = broken[name] {
                    run.skipMember(name, reason, refused: true)
                } else if let archive = archives.first(where: { $0.0 == name })?.1 {
                    try archive.importMembers(into: &run, prefix: name + "/", choice: format, playerTimeZone: playerTimeZone)
                } else {
                    try importPlainFile(file, named: name, into: &run)
                }
            }
            for (name, reason) in skipped { run.skipMember(name, reason) }
        } else if ExportArchive.isZIP(path) {
            let archive = try ExportArchive(path: path, maxMemberBytes: maxMemberBytes)
            run.summary.isCollection = true
            run.totalBytes = archive.totalBytes
            try archive.importMembers(into: &run, prefix: "", choice: format, playerTimeZone: playerTimeZone)
        } else {
            run.totalBytes = Self.size(of: path)
            try importPlainFile(path, named: nil, into: &run)
        }
        try run.finish()
        return run.summary
    }

    /// One export file, read in 1 MiB chunks.
    private func importPlainFile(_ path: String, named name: String?, into run: inout ImportRun) throws {
        if let name, name == AlbumFoldingMember.path || name.hasSuffix("/" + AlbumFoldingMember.path),
           Self.size(of: path) <= AlbumFoldingMember.largest, let bytes = FileManager.default.contents(atPath: path) {
            run.summary.albumFolding = AlbumFoldingMember.folding(from: [UInt8](bytes)) ?? run.summary.albumFolding
            run.summary.albumChoices += AlbumFoldingMember.changes(from: [UInt8](bytes))
        }
        if let name, let reason = MemberNames.notHistory(name) {
            run.skipMember(name, reason)
            return
        }
        var chunks = try FileChunks(path: path)
        defer { chunks.close() }
        run.beginMember(name ?? URL(fileURLWithPath: path).lastPathComponent, listed: name)
        var reader = MemberReader(choice: format, playerTimeZone: playerTimeZone)
        let before = run.bytesRead
        while let chunk = try chunks.next() {
            try reader.feed(chunk, &run)
            run.bytesRead = before + chunks.bytesRead
        }
        try reader.finish(&run)
        try run.endMember(reader)
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func size(of path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Why `path`, given directly, cannot be imported, or nil when it is a
    /// regular file or a directory (symbolic links followed). A named pipe
    /// or a device would be read for ever (`/dev/zero`) or wait for a
    /// writer that never comes (`mkfifo`), so they are refused by kind.
    static func notReadable(_ path: String) -> String? {
        specialKind(of: path).map { "it is \($0), not a file" }
    }

    /// What `path` is when it is neither a regular file nor a directory
    /// ("a named pipe (FIFO)", "a device", …); nil otherwise or when it
    /// does not exist (the reader then says so).
    static func specialKind(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a named pipe (FIFO)"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "something other than a file"
        }
    }

    /// What a directory holds for an import.
    struct Listing {
        /// Every regular file: its path, and its name relative to the
        /// directory given (`a.csv`, `listens/2020/2.jsonl`), in natural
        /// order (`listens/2020/2.jsonl` before `listens/2020/10.jsonl`).
        var files: [(path: String, name: String)] = []
        /// What was left alone, named the same way, and why.
        var skipped: [(name: String, reason: String)] = []
    }

    /// The files under `directory`. Hidden files and folders are left out,
    /// except `.scrobbler.log`: that is the name a portable player gives
    /// its log. Symbolic links are not followed, and neither they nor pipes
    /// or devices are read; each is listed as skipped.
    static func files(in directory: String) throws -> Listing {
        // The directory named is followed when it is itself a link (the
        // person named it); links below it are not.
        let root = URL(fileURLWithPath: directory).resolvingSymlinksInPath().standardizedFileURL
        let keys: [URLResourceKey] = [.isRegularFileKey, .isDirectoryKey, .isSymbolicLinkKey]
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys) else {
            throw SourceError.unreadableFile(path: directory, reason: "the directory could not be listed")
        }
        // Names are the components below the root, whatever the spelling
        // of the path given (`dir`, `./dir`, `/abs/dir/`).
        let depth = root.pathComponents.count
        var listing = Listing()
        for case let url as URL in walker {
            let values = try? url.resourceValues(forKeys: Set(keys))
            let name = url.standardizedFileURL.pathComponents.dropFirst(depth).joined(separator: "/")
            if url.lastPathComponent.hasPrefix("."), url.lastPathComponent != ".scrobbler.log" {
                if values?.isDirectory == true { walker.skipDescendants() }
                continue
            }
            if values?.isSymbolicLink == true {
                listing.skipped.append((name, "a symbolic link, not followed"))
            } else if values?.isRegularFile == true {
                listing.files.append((url.path, name))
            } else if values?.isDirectory != true {
                listing.skipped.append((name, "\(specialKind(of: url.path) ?? "something other than a file"), not read"))
            }
        }
        guard !listing.files.isEmpty else {
            throw SourceError.unreadableFile(path: directory, reason: "it is a directory with no export files in it")
        }
        listing.files.sort { MemberNames.naturalOrder($0.name, $1.name) }
        listing.skipped.sort { MemberNames.naturalOrder($0.name, $1.name) }
        return listing
    }
}
