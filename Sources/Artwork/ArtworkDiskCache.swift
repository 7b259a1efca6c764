import Foundation
import NIOPosix

/// The files behind `ArtworkStore`: `<root>/<size>/<hash>.<ext>` for the bytes
/// and `<root>/<size>/<hash>.<ext>.colours.json` for their palette.
///
/// Every write goes to a temporary file in the same directory and is then
/// renamed over the target, so a reader (or a crash) sees the old file or the
/// new one, never half of one.
///
/// Every file call blocks its thread, so each runs on `fileThreads` (NIO's
/// pool for blocking work), never on Swift's cooperative pool: that pool has
/// one thread per core, and a slow disk holding them would stop every page.
struct ArtworkDiskCache: Sendable {
    let root: URL
    let budget: ArtworkDiskBudget
    let fileThreads: NIOThreadPool

    init(root: URL, maxBytes: Int64? = nil, fileThreads: NIOThreadPool = .singleton) {
        self.root = root
        budget = ArtworkDiskBudget(limit: maxBytes)
        self.fileThreads = fileThreads
    }

    static let coloursSuffix = ".colours.json"

    /// Bump when `ColourExtraction` changes, so old palettes are recomputed.
    static let coloursVersion = 1

    private struct ColoursFile: Codable {
        let version: Int
        let colours: AlbumColours
    }

    func imageURL(_ address: ArtworkAddress) -> URL {
        root.appendingPathComponent(address.size.rawValue, isDirectory: true)
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
            // Counting and pruning walk the directory: blocking work too.
            budget.wrote(bytes.count, under: root)
        }
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
        let url = imageURL(address)
        guard let data = try? Data(contentsOf: url),
              let format = ImageFormat(sniffing: data)
        else { return nil }
        ArtworkDiskBudget.touch(url)
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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
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
