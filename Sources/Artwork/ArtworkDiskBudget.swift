import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the art directory under a size limit by removing the images used
/// least recently, each with its palette sidecar.
///
/// "Used" is the file's modification time: the cache touches an image each
/// time it serves it from disk. The running total is counted from disk on
/// the first write after start-up and kept up to date after that; when a
/// write takes it over the limit, images are removed oldest first until the
/// directory is at 80% of the limit. A removed image is simply fetched (or,
/// for the demo, drawn) again the next time it is asked for.
final class ArtworkDiskBudget: @unchecked Sendable {
    /// The limit in bytes, or nil for no limit.
    let limit: Int64?
    private let lock = NSLock()
    private var used: Int64?
    private var pruning = false

    init(limit: Int64?) {
        self.limit = limit
    }

    /// Notes `bytes` written under `root`, and prunes when over the limit.
    func wrote(_ bytes: Int, under root: URL) {
        guard let limit else { return }
        let mustPrune: Bool = lock.withLock {
            if let current = used {
                used = current + Int64(bytes)
            } else {
                used = Self.files(under: root).reduce(0) { $0 + $1.size }
            }
            guard let total = used, total > limit, !pruning else { return false }
            pruning = true
            return true
        }
        if mustPrune { prune(root, down: limit * 8 / 10) }
    }

    /// Marks a file as just used.
    static func touch(_ url: URL) {
        _ = utimes(url.path, nil)
    }

    private func prune(_ root: URL, down target: Int64) {
        // An image and its sidecar go together, dated by the image.
        var groups: [String: (files: [URL], size: Int64, used: Date)] = [:]
        var total: Int64 = 0
        for file in Self.files(under: root) {
            total += file.size
            let path = file.url.path
            let key = path.hasSuffix(ArtworkDiskCache.coloursSuffix) ? String(path.dropLast(ArtworkDiskCache.coloursSuffix.count)) : path
            var group = groups[key] ?? ([], 0, .distantPast)
            group.files.append(file.url)
            group.size += file.size
            if !path.hasSuffix(ArtworkDiskCache.coloursSuffix) { group.used = file.modified }
            groups[key] = group
        }
        for group in groups.values.sorted(by: { $0.used < $1.used }) {
            guard total > target else { break }
            for url in group.files { try? FileManager.default.removeItem(at: url) }
            total -= group.size
        }
        lock.withLock {
            used = total
            pruning = false
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
