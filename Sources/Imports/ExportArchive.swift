import Foundation
import Stores
import VinylogueCore
import ZIPFoundation

/// A ZIP archive of listening exports, as ListenBrainz (`user.json`,
/// `feedback.jsonl`, `listens/YYYY/M.jsonl`) and Spotify
/// (`Spotify Extended Streaming History/Streaming_History_Audio_*.json`)
/// deliver them, read with ZIPFoundation.
///
/// Members are inflated in `chunkSize` (1 MiB) pieces straight into the importer,
/// never written to disk, so a member named `../../x` is only a label.
/// Each member is inflated twice: first to check its CRC-32 and its size
/// (at most `maxMemberBytes`, counted as the bytes come out, whatever the
/// header claims), then to import it. So a damaged member or a ZIP bomb is
/// refused before any of it is stored, and the other members still import.
/// Inflating is cheap next to parsing and storing (see docs/BENCHMARKS.md).
struct ExportArchive {
    let path: String
    let maxMemberBytes: Int64
    private let archive: Archive
    /// The file members, in natural order of their paths.
    private let entries: [Entry]
    /// The bytes the members to read inflate to, as their headers say (for progress).
    let totalBytes: Int64
    static let chunkSize = 1 << 20

    /// True when the file starts like a ZIP archive (a local file header, or an empty archive's end record).
    static func isZIP(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let magic = try? handle.read(upToCount: 4), magic.count == 4 else { return false }
        return Array(magic) == [0x50, 0x4B, 0x03, 0x04] || Array(magic) == [0x50, 0x4B, 0x05, 0x06]
    }

    init(path: String, maxMemberBytes: Int64) throws {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw SourceError.unreadableFile(path: path, reason: "it starts like a ZIP archive, but its table of contents "
                + "could not be read (an incomplete download?); download the export again")
        }
        // ZIPFoundation stops listing at the first entry it cannot read and
        // trusts the end record's offset: a damaged table of contents
        // listed nothing, and the import said "no listening history".
        let listed = Array(archive)
        if !Self.tableOfContentsIsWhole(path: path, listed: listed.count) {
            throw SourceError.unreadableFile(path: path, reason: "it is a ZIP archive whose table of contents is damaged, so its members "
                + "cannot be found (an incomplete or corrupted download?); download the export again")
        }
        self.path = path
        self.maxMemberBytes = maxMemberBytes
        self.archive = archive
        // Each entry's path is decoded once (ZIPFoundation decodes it
        // anew on every read): sorting 20,000 members compared paths
        // 600,000 times.
        entries = listed.filter { $0.type == .file }
            .map { (path: $0.path, entry: $0) }
            .sorted { MemberNames.naturalOrder($0.path, $1.path) }
            .map(\.entry)
        totalBytes = entries.reduce(0) { total, entry in
            MemberNames.notHistory(entry.path) == nil ? total + Int64(min(entry.uncompressedSize, UInt64(maxMemberBytes))) : total
        }
    }

    /// Whether the archive's table of contents (the central directory) is
    /// what its end record says: it lies before the end record, and every
    /// entry it declares was listed. An archive that declares no entries
    /// must hold no local file headers either (a file starting with one
    /// is not empty). ZIP64 archives are left to ZIPFoundation.
    static func tableOfContentsIsWhole(path: String, listed: Int) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return true }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size >= 22 else { return true }
        // The end record is 22 bytes plus a comment of up to 65,535.
        let tailLength = min(size, 22 + 65_535)
        guard (try? handle.seek(toOffset: size - tailLength)) != nil,
              let tail = try? handle.read(upToCount: Int(tailLength)) else { return true }
        let bytes = [UInt8](tail)
        guard let record = stride(from: bytes.count - 22, through: 0, by: -1).first(where: {
            bytes[$0] == 0x50 && bytes[$0 + 1] == 0x4B && bytes[$0 + 2] == 0x05 && bytes[$0 + 3] == 0x06
        }) else { return false }
        func little(_ at: Int, _ count: Int) -> UInt64 {
            (0..<count).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
        }
        let declared = little(record + 10, 2), directorySize = little(record + 12, 4), offset = little(record + 16, 4)
        if declared == 0xFFFF || directorySize == 0xFFFF_FFFF || offset == 0xFFFF_FFFF { return true }  // ZIP64
        let recordOffset = size - tailLength + UInt64(record)
        guard offset + directorySize <= recordOffset else { return false }
        if declared == 0 { return !isZIPWithMembers(path) }
        // The table counted as it is, record by record: an end record that
        // declares fewer members than it holds would leave the rest unread.
        guard let held = recordsIn(handle, at: offset, size: directorySize) else { return false }
        return UInt64(listed) == declared && UInt64(held) == declared
    }

    /// How many central-directory records fill the `size` bytes at
    /// `offset` exactly, or nil when they do not (a record cut short, or
    /// bytes that are not one).
    private static func recordsIn(_ handle: FileHandle, at offset: UInt64, size: UInt64) -> Int? {
        // A table of contents past 64 MiB (a million members) is left to ZIPFoundation.
        guard size <= 64 << 20 else { return nil }
        guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.read(upToCount: Int(size)),
              data.count == Int(size) else { return nil }
        let bytes = [UInt8](data)
        var at = 0, count = 0
        while at < bytes.count {
            guard at + 46 <= bytes.count, bytes[at] == 0x50, bytes[at + 1] == 0x4B, bytes[at + 2] == 0x01, bytes[at + 3] == 0x02 else {
                return nil
            }
            let name = Int(bytes[at + 28]) | Int(bytes[at + 29]) << 8
            let extra = Int(bytes[at + 30]) | Int(bytes[at + 31]) << 8
            let comment = Int(bytes[at + 32]) | Int(bytes[at + 33]) << 8
            at += 46 + name + extra + comment
            count += 1
        }
        return at == bytes.count ? count : nil
    }

    /// Whether the file starts with a local file header (a member).
    private static func isZIPWithMembers(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)).map { Array($0) == [0x50, 0x4B, 0x03, 0x04] } ?? false
    }

    /// Imports every member in turn; `prefix` goes before member names in
    /// the summary (the archive's name when it was found in a directory).
    func importMembers(into run: inout ImportRun, prefix: String, choice: FormatChoice?, playerTimeZone: TimeZone?) throws {
        for entry in entries {
            let name = prefix + entry.path
            if entry.path == AlbumFoldingMember.path, entry.uncompressedSize <= AlbumFoldingMember.largest, check(entry) == nil {
                var bytes: [UInt8] = []
                _ = try? archive.extract(entry, bufferSize: Self.chunkSize, skipCRC32: false) { bytes += $0 }
                run.summary.albumFolding = AlbumFoldingMember.folding(from: bytes) ?? run.summary.albumFolding
                run.summary.albumChoices += AlbumFoldingMember.changes(from: bytes)
            }
            if let reason = MemberNames.notHistory(entry.path) {
                run.skipMember(name, reason)
                continue
            }
            if let problem = check(entry) {
                run.skipMember(name, problem, refused: true)
                run.bytesRead += Int64(min(entry.uncompressedSize, UInt64(maxMemberBytes)))
                continue
            }
            run.beginMember(name, listed: name)
            var reader = MemberReader(choice: choice, playerTimeZone: playerTimeZone)
            do {
                _ = try archive.extract(entry, bufferSize: Self.chunkSize, skipCRC32: true) { data in
                    try reader.feed([UInt8](data), &run)
                    run.bytesRead += Int64(data.count)
                }
            } catch let error as SourceError {
                throw error
            } catch {
                // Checked a moment ago; the file changed under us. Say so and go on.
                run.reject(0, "the member could not be read to the end (\(error)); the archive may have changed while it was read")
            }
            try reader.finish(&run)
            try run.endMember(reader)
        }
    }

    private struct TooLarge: Error {}

    /// Why `entry` must not be imported (damaged, or inflating past
    /// `maxMemberBytes`), or `nil` when it is sound.
    private func check(_ entry: Entry) -> String? {
        let limit = maxMemberBytes
        let mib = { (bytes: Int64) in "\(bytes >> 20) MiB" }
        if entry.uncompressedSize > UInt64(limit) {
            return "it says it inflates to \(mib(Int64(clamping: entry.uncompressedSize))), over the \(mib(limit)) limit for one member; "
                + "no listening export is that large, so it was refused as a possible ZIP bomb"
        }
        var inflated: Int64 = 0
        do {
            let crc = try archive.extract(entry, bufferSize: Self.chunkSize, skipCRC32: false) { data in
                inflated += Int64(data.count)
                if inflated > limit { throw TooLarge() }
            }
            guard crc == entry.checksum else {
                return "it is damaged (its checksum does not match); download the export again"
            }
            return nil
        } catch is TooLarge {
            return "it inflates to more than \(mib(limit)) (\(entry.compressedSize >> 10) KiB compressed), over the limit for one member; "
                + "no listening export is that large, so it was refused as a possible ZIP bomb"
        } catch {
            return "it is damaged and could not be inflated (\(error)); download the export again"
        }
    }
}

/// Writes ZIP archives of export files, deflated as export sites send them:
/// for the benchmark (`vinylogue bench` times a ZIP import beside the plain
/// file) and for anyone scripting around the importer.
public enum ExportPacking {
    /// Packs the file at `file` into a new ZIP archive at `zip`, as the member `member`.
    public static func pack(file: String, as member: String, into zip: String) throws {
        let archive = try Archive(url: URL(fileURLWithPath: zip), accessMode: .create)
        try archive.addEntry(with: member, fileURL: URL(fileURLWithPath: file), compressionMethod: .deflate)
    }
}
