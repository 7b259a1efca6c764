import Foundation
import GRDB
import Synchronization
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
/// there (`SQLiteScrobbleStore.insertDistinct` makes every insert idempotent and
/// leaves out the same listen from another source). Bad lines are
/// reported with their member and line number and never stop the rest:
/// among them lines over 16 MiB (dropped as they stream past, never held
/// whole) and times outside `PlausibleTime.range(now:)`, read once from
/// `clock` per import. A UTF-8 byte-order mark at the start of any format
/// is skipped.
public struct ScrobbleImporter: Sendable {
    public let store: any ScrobbleArchive
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
    /// Rejected lines listed one by one in the summary; the rest are counted.
    public static let rejectionsKept = 1000

    public init(store: any ScrobbleArchive, clock: WallClock, batchSize: Int = 10_000, format: FormatChoice? = nil,
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
            throw ArchiveDatabase.failure(error)
        }
    }

    private func importing(_ path: String, _ user: Username, _ progress: @escaping (ImportProgress) -> Void) throws -> ImportSummary {
        var run = ImportRun(writer: BatchWriter(store: store, user: user), batchSize: batchSize,
                            plausible: PlausibleTime.range(now: clock.now), progress: progress)
        if Self.isDirectory(path) {
            let files = try Self.files(in: path)
            run.summary.isCollection = true
            var archives: [(String, ExportArchive)] = []
            var broken: [String: String] = [:]
            for file in files {
                let name = String(file.dropFirst(path.count).drop { $0 == "/" })
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
            for file in files {
                let name = String(file.dropFirst(path.count).drop { $0 == "/" })
                if let reason = broken[name] {
                    run.skipMember(name, reason, refused: true)
                } else if let archive = archives.first(where: { $0.0 == name })?.1 {
                    try archive.importMembers(into: &run, prefix: name + "/", choice: format, playerTimeZone: playerTimeZone)
                } else {
                    try importPlainFile(file, named: name, into: &run)
                }
            }
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

    /// Every regular file under `directory`, in natural order
    /// (`listens/2020/2.jsonl` before `listens/2020/10.jsonl`). Hidden
    /// files and folders are left out, except `.scrobbler.log`: that is
    /// the name a portable player gives its log.
    static func files(in directory: String) throws -> [String] {
        let root = URL(fileURLWithPath: directory)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .isDirectoryKey]) else {
            throw SourceError.unreadableFile(path: directory, reason: "the directory could not be listed")
        }
        var files: [String] = []
        for case let url as URL in walker {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isDirectoryKey])
            let name = url.lastPathComponent
            if name.hasPrefix("."), name != ".scrobbler.log" {
                if values?.isDirectory == true { walker.skipDescendants() }
                continue
            }
            if values?.isRegularFile == true { files.append(url.path) }
        }
        guard !files.isEmpty else {
            throw SourceError.unreadableFile(path: directory, reason: "it is a directory with no export files in it")
        }
        return files.sorted { MemberNames.naturalOrder($0, $1) }
    }
}
