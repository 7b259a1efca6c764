import Foundation
import GRDB
import Synchronization
import VinylogueCore

/// The kinds of export file the importer reads, recognised from the content.
public enum ExportFormat: String, Sendable, Hashable {
    /// Last.fm scrobble export without a header: `artist,album,track,date`.
    /// Its dates have minute resolution, so two plays of one track by one
    /// artist in the same minute share a dedupe key and count once.
    case lastFMCSV = "Last.fm CSV export (artist,album,track,date)"
    /// Last.fm scrobble export with the header `uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid`.
    case lastFMCSVWithHeader = "Last.fm CSV export (uts,utc_time,artist,…)"
    /// A JSON array of ListenBrainz listens.
    case listenBrainzJSON = "ListenBrainz listens (JSON array)"
    /// ListenBrainz listens, one JSON object per line.
    case listenBrainzJSONLines = "ListenBrainz listens (JSON lines)"
    /// Spotify extended streaming history (`Streaming_History_Audio_*.json`, `endsong_*.json`).
    case spotifyJSON = "Spotify extended streaming history (JSON)"
    /// A JSON array whose elements were not recognised.
    case jsonArray = "JSON array"
}

/// One line (or JSON element) the importer could not use.
public struct RejectedLine: Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number in the file (for a JSON element: where it starts).
    public let line: Int
    public let reason: String

    public var description: String { "line \(line): \(reason)" }
}

/// What an import did.
public struct ImportSummary: Sendable, Hashable {
    public var format: ExportFormat?
    public var imported = 0
    /// Scrobbles already in the archive (or repeated in the file).
    public var duplicates = 0
    /// Entries that are fine but not scrobbles, by reason (podcasts, short plays).
    public var skipped: [String: Int] = [:]
    /// How many lines were rejected in all.
    public var rejectedCount = 0
    /// The first `ScrobbleImporter.rejectionsKept` rejected lines, in file order.
    public var rejected: [RejectedLine] = []

    public init() {}
}

/// How far an import has got, for a progress bar.
public struct ImportProgress: Sendable, Hashable {
    public let bytesRead: Int64
    public let totalBytes: Int64
    public let imported: Int
    public let duplicates: Int
    public let rejected: Int
}

/// Imports a listening export file into the archive for one user.
///
/// Streams the file in 1 MiB chunks, so memory stays flat whatever its
/// size; recognises the format from the first bytes; stores scrobbles in
/// batches, one transaction each, so a killed import keeps every finished
/// batch and a rerun skips what is already there (the archive's dedupe key
/// makes every insert idempotent). Bad lines are reported with their line
/// number and never stop the rest: among them lines over 16 MiB (dropped as
/// they stream past, never held whole) and times outside
/// `PlausibleTime.range(now:)`, read once from `clock` per import.
/// A UTF-8 byte-order mark at the start of any format is skipped.
public struct ScrobbleImporter: Sendable {
    public let store: ScrobbleStore
    public let clock: WallClock
    public var batchSize: Int
    /// Rejected lines listed one by one in the summary; the rest are counted.
    public static let rejectionsKept = 1000

    public init(store: ScrobbleStore, clock: WallClock, batchSize: Int = 10_000) {
        self.store = store
        self.clock = clock
        self.batchSize = max(1, batchSize)
    }

    /// Imports the file at `path` for `user`, calling `progress` after each batch.
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
        var chunks = try FileChunks(path: path)
        defer { chunks.close() }
        var firstChunk = try chunks.next()
        if let bytes = firstChunk, bytes.starts(with: FileChunks.byteOrderMark) {
            firstChunk = bytes.count > 3 ? Array(bytes[3...]) : try chunks.next()
        }
        guard let first = firstChunk else {
            var summary = ImportSummary()
            summary.rejectedCount = 1
            summary.rejected = [RejectedLine(line: 1, reason: "the file is empty")]
            return summary
        }
        let userID = try store.write { db in try ScrobbleStore.ensureUserID(of: user, in: db) }
        var run = Run(writer: BatchWriter(store: store, userID: userID), batchSize: batchSize, totalBytes: chunks.totalBytes,
                      plausible: PlausibleTime.range(now: clock.now), progress: progress)

        switch Self.firstSignificantByte(first) {
        case UInt8(ascii: "["):
            run.summary.format = .jsonArray
            var splitter = JSONArraySplitter()
            var chunk: [UInt8]? = first
            while let bytes = chunk {
                try splitter.feed(bytes) { event in try run.handle(event) }
                run.bytesRead = chunks.bytesRead
                chunk = try chunks.next()
            }
            try splitter.finish { event in try run.handle(event) }
        case UInt8(ascii: "{"):
            run.summary.format = .listenBrainzJSONLines
            try Self.lines(first, &chunks, &run) { line, number, run in
                guard !line.allSatisfy(JSONArraySplitter.isSpace) else { return }
                try run.handle(ListenObjects.outcome(Array(line)), line: number)
            }
        default:
            var csv: CSVRows?
            try Self.lines(first, &chunks, &run) { line, number, run in
                if csv == nil {
                    let (rows, isHeader) = CSVRows.detect(firstLine: line)
                    csv = rows
                    run.summary.format = rows.format
                    if isHeader { return }
                }
                guard !line.isEmpty else { return }
                switch csv!.scrobble(line) {
                case .success(let scrobble): try run.add(scrobble, origin: .lastFMExport, line: number)
                case .failure(let problem): run.reject(number, problem.reason)
                }
            }
        }
        try run.finish()
        return run.summary
    }

    private static func lines(_ first: [UInt8], _ chunks: inout FileChunks, _ run: inout Run,
                              _ body: (ArraySlice<UInt8>, Int, inout Run) throws -> Void) throws {
        var splitter = LineSplitter()
        var chunk: [UInt8]? = first
        func line(_ line: LineSplitter.Line, _ number: Int) throws {
            switch line {
            case .text(let text): try body(text, number, &run)
            case .tooLong(let bytes):
                run.reject(number, "the line is \(bytes) bytes long, over the \(LineSplitter.maxLineLength >> 20) MiB limit for one line")
            }
        }
        while let bytes = chunk {
            try splitter.feed(bytes, line)
            run.bytesRead = chunks.bytesRead
            chunk = try chunks.next()
        }
        try splitter.finish(line)
    }

    static func firstSignificantByte(_ bytes: [UInt8]) -> UInt8? {
        bytes.first { !JSONArraySplitter.isSpace($0) }
    }

    /// The state of one import: the batch being filled and the running summary.
    struct Run {
        let writer: BatchWriter
        let batchSize: Int
        let totalBytes: Int64
        /// The instants this import accepts (`PlausibleTime.range(now:)`).
        let plausible: ClosedRange<Int64>
        let progress: (ImportProgress) -> Void
        var summary = ImportSummary()
        var bytesRead: Int64 = 0
        var batch: [(Scrobble, ScrobbleOrigin)] = []

        mutating func handle(_ event: JSONArraySplitter.Event) throws {
            switch event {
            case .element(let bytes, let line): try handle(ListenObjects.outcome(bytes), line: line)
            case .problem(let reason, let line): reject(line, reason)
            }
        }

        mutating func handle(_ outcome: ListenObjects.Outcome, line: Int) throws {
            switch outcome {
            case .scrobble(let scrobble, let origin):
                if summary.format == nil || summary.format == .jsonArray {
                    summary.format = origin == .spotify ? .spotifyJSON : .listenBrainzJSON
                }
                try add(scrobble, origin: origin, line: line)
            case .skipped(let reason): summary.skipped[reason, default: 0] += 1
            case .rejected(let problem): reject(line, problem.reason)
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
            if summary.rejected.count < ScrobbleImporter.rejectionsKept { summary.rejected.append(RejectedLine(line: line, reason: reason)) }
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
                                    duplicates: counts.duplicates, rejected: summary.rejectedCount))
        }

        /// Waits for every batch to be stored.
        mutating func finish() throws {
            try flush()
            let counts = try writer.finish()
            summary.imported = counts.inserted
            summary.duplicates = counts.duplicates
        }
    }
}

/// Stores batches on a background queue, in submission order, at most two
/// in flight (so memory stays bounded); the first failure stops the import.
final class BatchWriter: Sendable {
    private let store: ScrobbleStore
    private let userID: Int64
    private let queue = DispatchQueue(label: "vinylogue.import.writer")
    private let slots = DispatchSemaphore(value: 2)

    private struct Progress {
        var stored = InsertCounts()
        var failure: (any Error)?
    }

    private let progress = Mutex(Progress())

    init(store: ScrobbleStore, userID: Int64) {
        self.store = store
        self.userID = userID
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
                let userID = self.userID
                let counts = try store.write { db in
                    var counts = InsertCounts()
                    // Runs of one origin share one statement loop.
                    var start = batch.startIndex
                    while start < batch.endIndex {
                        let origin = batch[start].1
                        let end = batch[start...].firstIndex { $0.1 != origin } ?? batch.endIndex
                        counts += try ScrobbleStore.insert(batch[start..<end].lazy.map(\.0), userID: userID, origin: origin, in: db)
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
    func finish() throws -> InsertCounts {
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
