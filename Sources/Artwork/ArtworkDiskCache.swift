import Foundation
import NIOPosix
import VinylogueCore

/// The files behind `ArtworkStore`: `<root>/<size>/<hash>.<ext>` for the bytes
/// and `<root>/<size>/<hash>.<ext>.colours.json` for their palette.
///
/// Every write goes to a temporary file in the same directory and is then
/// renamed over the target, so a reader (or a crash) sees the old file or the
/// new one, never half of one.
///
/// Covers kept for offline use (`ArtworkStore.keep`, which `vinylogue art
/// fetch` calls for every archived album) live under `keptRoot`, a sibling
/// directory the size budget never walks, so they are never pruned; reads
/// look there first.
///
/// Every file call blocks its thread, so each runs on `fileThreads` (NIO's
/// pool for blocking work), never on Swift's cooperative pool: that pool has
/// one thread per core, and a slow disk holding them would stop every page.
struct ArtworkDiskCache: Sendable {
    let root: URL
    /// Kept covers: outside `root`, so outside the size budget.
    let keptRoot: URL?
    let budget: ArtworkDiskBudget
    let fileThreads: NIOThreadPool
    /// Dates each image's last use (its modification time).
    let clock: WallClock

    init(root: URL, keptRoot: URL? = nil, maxBytes: Int64? = nil, fileThreads: NIOThreadPool = .singleton, clock: WallClock = .system) {
        self.root = root
        self.keptRoot = keptRoot
        budget = ArtworkDiskBudget(limit: maxBytes)
        self.fileThreads = fileThreads
        self.clock = clock
    }

    static let coloursSuffix = ".colours.json"

    /// Bump when `ColourExtraction` changes, so old palettes are recomputed.
    static let coloursVersion = 2

    private struct ColoursFile: Codable {
        let version: Int
        let colours: AlbumColours
    }

    func imageURL(_ address: ArtworkAddress) -> URL {
        root.appendingPathComponent(address.size.rawValue, isDirectory: true)
            .appendingPathComponent(address.fileName, isDirectory: false)
    }

    func keptURL(_ address: ArtworkAddress) -> URL? {
        keptRoot?.appendingPathComponent(address.size.rawValue, isDirectory: true)
            .appendingPathComponent(address.fileName, isDirectory: false)
    }

    func coloursURL(_ address: ArtworkAddress) -> URL {
        root.appendingPathComponent(address.size.rawValue, isDirectory: true)
            .appendingPathComponent(address.fileName + Self.coloursSuffix, isDirectory: false)
    }

    /// The stored bytes, if present and still an image. Marks the image
    /// as used, for the size limit.
    func bytes(for address: ArtworkAddress) async -> (Data, ImageFormat)? {
        try? await fileThreads.runIfActive { readBytes(address) }
    }

    /// The stored palette, if present and current.
    func colours(for address: ArtworkAddress) async -> AlbumColours? {
        try? await fileThreads.runIfActive { readColours(address) }
    }

    func store(bytes: Data, for address: ArtworkAddress) async throws {
        try await fileThreads.runIfActive {
            try Self.writeAtomically(bytes, to: imageURL(address))
            ArtworkDiskBudget.touch(imageURL(address), at: clock.now)
            // Counting and pruning walk the directory: blocking work too.
            budget.wrote(bytes.count, under: root)
        }
    }

    /// Whether the image is kept for offline use (and still an image).
    func isKept(_ address: ArtworkAddress) async -> Bool {
        guard let url = keptURL(address) else { return false }
        return (try? await fileThreads.runIfActive { Self.readImage(at: url) != nil }) ?? false
    }

    /// Keeps `bytes` for offline use, outside the size budget.
    func keep(bytes: Data, for address: ArtworkAddress) async throws {
        guard let url = keptURL(address) else { return }
        try await fileThreads.runIfActive { try Self.writeAtomically(bytes, to: url) }
    }

    /// How many images are kept and their bytes.
    func keptTotals() async -> (images: Int, bytes: Int64) {
        guard let keptRoot else { return (0, 0) }
        let files = (try? await fileThreads.runIfActive { ArtworkDiskBudget.files(under: keptRoot) }) ?? []
        return (files.count, files.reduce(0) { $0 + $1.size })
    }

    func store(colours: AlbumColours, for address: ArtworkAddress) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(ColoursFile(version: Self.coloursVersion, colours: colours))
        try await fileThreads.runIfActive {
            try Self.writeAtomically(data, to: coloursURL(address))
            budget.wrote(data.count, under: root)
        }
    }

    private func readBytes(_ address: ArtworkAddress) -> (Data, ImageFormat)? {
        // A kept cover is never pruned, so it needs no touching.
        if let kept = keptURL(address), let found = Self.readImage(at: kept) { return found }
        let url = imageURL(address)
        guard let found = Self.readImage(at: url) else { return nil }
        ArtworkDiskBudget.touch(url, at: clock.now)
        return found
    }

    private static func readImage(at url: URL) -> (Data, ImageFormat)? {
        guard let data = try? Data(contentsOf: url), let format = ImageFormat(sniffing: data) else { return nil }
        return (data, format)
    }

    private func readColours(_ address: ArtworkAddress) -> AlbumColours? {
        guard let data = try? Data(contentsOf: coloursURL(address)),
              let file = try? JSONDecoder().decode(ColoursFile.self, from: data),
              file.version == Self.coloursVersion
        else { return nil }
        return file.colours
    }

    /// Writes `data` to a temporary sibling of `url`, then renames it into
    /// place. Blocks: call it on `fileThreads`.
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            // Another writer may have made it between Foundation's check and
            // its mkdir (it then fails with "file exists"): that is success.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { throw error }
        }
        // Hidden and unique, so concurrent writers never share a temp file and
        // nothing globbing for images picks it up.
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            // rename(2) replaces the target in one step; FileManager.moveItem
            // would refuse an existing target.
            guard rename(temporary.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
