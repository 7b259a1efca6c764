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
/// there (`ScrobbleStore.insertDistinct` makes every insert idempotent and
/// leaves out the same listen from another source). Bad lines are
/// reported with their member and line number and never stop the rest:
/// among them lines over 16 MiB (dropped as they stream past, never held
/// whole) and times outside `PlausibleTime.range(now:)`, read once from
/// `clock` per import. A UTF-8 byte-order mark at the start of any format
/// is skipped.
public struct ScrobbleImporter: Sendable {
    public let store: ScrobbleStore
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

    public init(store: ScrobbleStore, clock: WallClock, batchSize: Int = 10_000, format: FormatChoice? = nil,
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
            for file in files {
                let name = String(file.dropFirst(path.count).drop { $0 == "/" })
                if ExportArchive.isZIP(file) {
                    let archive = try ExportArchive(path: file, maxMemberBytes: maxMemberBytes)
                    run.totalBytes += archive.totalBytes
                    archives.append((name, archive))
                } else {
                    run.totalBytes += Self.size(of: file)
                }
            }
            for file in files {
                let name = String(file.dropFirst(path.count).drop { $0 == "/" })
                if let archive = archives.first(where: { $0.0 == name })?.1 {
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
    }
}

/// Stores batches on a background queue, in submission order, at most two
/// in flight (so memory stays bounded); the first failure stops the import.
/// Its counts follow the archive's duplicate rule (`insertDistinct`).
final class BatchWriter: Sendable {
    private let store: ScrobbleStore
    private let user: Username
    private let queue = DispatchQueue(label: "vinylogue.import.writer")
    private let slots = DispatchSemaphore(value: 2)

    private struct Progress {
        var stored = InsertCounts()
        var failure: (any Error)?
    }

    private let progress = Mutex(Progress())

    init(store: ScrobbleStore, user: Username) {
        self.store = store
        self.user = user
    }

    /// Counts of the batches stored so far.
    var counts: InsertCounts { progress.withLock { $0.stored } }

    func submit(_ batch: [(Scrobble, ScrobbleOrigin)]) throws {
        slots.wait()
        if let failure = progress.withLock({ $0.failure }) {
            slots.signal()
            throw failure
        }
        queue.async { [self] in
            defer { slots.signal() }
            guard progress.withLock({ $0.failure == nil }) else { return }
            do {
                let user = self.user
                let counts = try store.write { db in
                    // The user row is written with the first batch, so a
                    // file that holds no scrobbles leaves nothing behind.
                    let userID = try ScrobbleStore.ensureUserID(of: user, in: db)
                    var counts = InsertCounts()
                    // Runs of one origin share one statement loop.
                    var start = batch.startIndex
                    while start < batch.endIndex {
                        let origin = batch[start].1
                        let end = batch[start...].firstIndex { $0.1 != origin } ?? batch.endIndex
                        counts += try ScrobbleStore.insertDistinct(batch[start..<end].lazy.map(\.0), userID: userID, origin: origin, in: db)
                        start = end
                    }
                    return counts
                }
                progress.withLock { $0.stored += counts }
            } catch {
                progress.withLock { $0.failure = error }
            }
        }
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

/// The two Last.fm CSV layouts: which column holds what, and how a row
/// becomes a scrobble.
struct CSVRows {
    let format: ExportFormat
    let columns: Int
    let artist: Int, album: Int, track: Int
    /// Unix seconds (`uts`), or the header-less export's `date`.
    let time: Int
    let artistMBID: Int?, albumMBID: Int?, trackMBID: Int?

    /// The layout, and whether `firstLine` is its header.
    static func detect(firstLine: ArraySlice<UInt8>) -> (CSVRows, isHeader: Bool) {
        if case .success(let names) = CSVLine.fields(firstLine) {
            let lowered = names.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if let uts = lowered.firstIndex(of: "uts"), let artist = lowered.firstIndex(of: "artist"),
               let track = lowered.firstIndex(of: "track") {
                return (CSVRows(format: .lastFMCSVWithHeader, columns: names.count, artist: artist,
                                album: lowered.firstIndex(of: "album") ?? -1, track: track, time: uts,
                                artistMBID: lowered.firstIndex(of: "artist_mbid"), albumMBID: lowered.firstIndex(of: "album_mbid"),
                                trackMBID: lowered.firstIndex(of: "track_mbid")), true)
            }
        }
        return (CSVRows(format: .lastFMCSV, columns: 4, artist: 0, album: 1, track: 2, time: 3,
                        artistMBID: nil, albumMBID: nil, trackMBID: nil), false)
    }

    func scrobble(_ line: ArraySlice<UInt8>) -> Result<Scrobble, ImportProblem> {
        let fields: [String]
        switch CSVLine.fields(line) {
        case .success(let f): fields = f
        case .failure(let problem): return .failure(problem)
        }
        guard fields.count == columns else {
            return .failure(.init("expected \(columns) columns, found \(fields.count)"))
        }
        let instant: Int64?
        if format == .lastFMCSVWithHeader {
            instant = Int64(fields[time]).flatMap { $0 > 0 ? $0 : nil }
        } else {
            instant = Timestamps.lastFMExportDate(fields[time])
        }
        guard let instant else { return .failure(.init("invalid date \(ImportProblem.quoted(fields[time]))")) }
        let artist = fields[artist], track = fields[track]
        guard !artist.isEmpty else { return .failure(.init("missing artist")) }
        guard !track.isEmpty else { return .failure(.init("missing track")) }
        return .success(Scrobble(instant: instant, artist: artist, album: album >= 0 ? fields[album] : "", track: track,
                                 artistMBID: artistMBID.map { fields[$0] }, albumMBID: albumMBID.map { fields[$0] },
                                 trackMBID: trackMBID.map { fields[$0] }))
    }
}
