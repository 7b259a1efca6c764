import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the art directory under a size limit by removing the images used
/// least recently, each with its palette sidecar.
///
/// "Used" is the file's modification time: the cache dates an image by its
/// clock when it writes it and each time it serves it from disk. The running total is counted from disk on
/// the first write after start-up and kept up to date after that; when a
/// write takes it over the limit, images are removed oldest first until the
/// directory is at 80% of the limit. A removed image is simply fetched (or,
/// for the demo, drawn) again the next time it is asked for.
final class ArtworkDiskBudget: Sendable {
    /// The limit in bytes, or nil for no limit.
    let limit: Int64?

    private struct Tally {
        var used: Int64?
        var pruning = false
        /// Bytes written while a prune was listing and deleting files, added
        /// to the total it counts so they are not forgotten.
        var writtenDuringPrune: Int64 = 0
    }

    private let tally = Mutex(Tally())

    init(limit: Int64?) {
        self.limit = limit
    }

    /// Notes `bytes` written under `root`, and prunes when over the limit.
    func wrote(_ bytes: Int, under root: URL) {
        guard let limit else { return }
        // The first write after start-up counts what is already there,
        // outside the lock (it walks the whole directory).
        if tally.withLock({ $0.used == nil }) {
            let counted = Self.files(under: root).reduce(0) { $0 + $1.size }
            tally.withLock { if $0.used == nil { $0.used = counted - Int64(bytes) } }
        }
        let mustPrune: Bool = tally.withLock { tally in
            tally.used = (tally.used ?? 0) + Int64(bytes)
            if tally.pruning { tally.writtenDuringPrune += Int64(bytes) }
            guard let total = tally.used, total > limit, !tally.pruning else { return false }
            tally.pruning = true
            tally.writtenDuringPrune = 0
            return true
        }
        if mustPrune { prune(root, down: limit * 8 / 10) }
    }

    /// Marks a file as used at `instant`.
    static func touch(_ url: URL, at instant: Date) {
        let seconds = instant.timeIntervalSince1970.rounded(.down)
        let when = timespec(tv_sec: Int(seconds), tv_nsec: Int((instant.timeIntervalSince1970 - seconds) * 1_000_000_000))
        let times = [when, when]
        _ = utimensat(AT_FDCWD, url.path, times, 0)
    }

    private func prune(_ root: URL, down target: Int64) {
        // An image and its sidecar go together, dated by the image.
        var groups: [String: (files: [(URL, Int64)], used: Date)] = [:]
        var total: Int64 = 0
        for file in Self.files(under: root) {
            total += file.size
            let path = file.url.path
            let isSidecar = path.hasSuffix(ArtworkDiskCache.coloursSuffix)
            let key = isSidecar ? String(path.dropLast(ArtworkDiskCache.coloursSuffix.count)) : path
            var group = groups[key] ?? ([], .distantPast)
            group.files.append((file.url, file.size))
            if !isSidecar { group.used = file.modified }
            groups[key] = group
        }
        for group in groups.values.sorted(by: { $0.used < $1.used }) {
            guard total > target else { break }
            for (url, size) in group.files where (try? FileManager.default.removeItem(at: url)) != nil {
                total -= size
            }
        }
        let counted = total
        tally.withLock { tally in
            tally.used = counted + tally.writtenDuringPrune
            tally.writtenDuringPrune = 0
            tally.pruning = false
        }
    }

    /// Every cache file under `root` (temporary files excluded).
    static func files(under root: URL) -> [(url: URL, size: Int64, modified: Date)] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles]) else {
            return []
        }
        var found: [(URL, Int64, Date)] = []
        for case let url as URL in walker {
            guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            found.append((url, Int64(values.fileSize ?? 0), values.contentModificationDate ?? .distantPast))
        }
        return found
    }
}
