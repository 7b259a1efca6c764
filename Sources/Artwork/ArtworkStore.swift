import Foundation
import NIOPosix
import VinylogueCore

/// One image ready to serve: its bytes, what they are, and its palette.
public struct StoredArtwork: Sendable, Hashable {
    public let address: ArtworkAddress
    public let bytes: Data
    /// Sniffed from the bytes, never taken from the URL or upstream headers.
    public let format: ImageFormat
    public let colours: AlbumColours

    /// The HTTP Content-Type for `bytes`.
    public var contentType: String { format.contentType }
}

/// Album art on disk, fetched from upstream only on a miss.
///
/// - Identical requests in flight share one fetch.
/// - Only 2xx bodies whose bytes sniff as an image are written; error pages,
///   404s and oversize bodies are never cached.
/// - Colours are computed once per image and kept in a sidecar file, and in
///   the fleet's `PaletteStore` when there is one.
/// - `.demo` addresses are drawn by `GeneratedCover` (names looked up in the
///   `DemoCoverCatalogue`) and never touch the network.
public actor ArtworkStore {
    /// Computes a palette from image bytes; injectable so tests can count calls.
    public typealias ColourReading = @Sendable (Data) -> AlbumColours

    private let loader: Loader
    /// Dates the use of every file under the art directory (the size
    /// limit drops the least recently used first).
    public nonisolated let clock: WallClock

    /// 1 GiB: some 30,000 covers at Last.fm's 300 px size.
    public static let defaultMaxDiskBytes: Int64 = 1 << 30
    private var inFlight: [ArtworkAddress: Task<Result<StoredArtwork, ArtworkError>, Never>] = [:]

    /// - Parameters:
    ///   - dataDirectory: files go under `<dataDirectory>/art/`.
    ///   - imageBase: the Last.fm image root URLs are rebuilt from.
    ///   - maxDiskBytes: how large `art/` may grow before the images used
    ///     least recently are removed (nil: no limit).
    ///   - fileThreads: where the blocking file calls run, off Swift's
    ///     cooperative pool (NIO's shared pool for blocking work by default).
    ///   - clock: when an image was last used, for the size limit (files
    ///     are dated by it, not by the file system's coarse clock).
    public init(
        dataDirectory: URL,
        upstream: ArtworkUpstream,
        imageBase: String = ArtworkAddress.lastFMImageBase,
        demoCovers: DemoCoverCatalogue = DemoCoverCatalogue(),
        maxBytes: Int = ArtworkUpstream.defaultMaxBytes,
        maxDiskBytes: Int64? = ArtworkStore.defaultMaxDiskBytes,
        fileThreads: NIOThreadPool = .singleton,
        clock: WallClock = .system,
        palettes: (any PaletteStore)? = nil,
        colourReading: @escaping ColourReading = { ColourExtraction().colours(fromImage: $0) }
    ) {
        self.clock = clock
        loader = Loader(
            cache: ArtworkDiskCache(root: dataDirectory.appendingPathComponent("art", isDirectory: true),
                                    keptRoot: dataDirectory.appendingPathComponent(Self.keptDirectoryName, isDirectory: true),
                                    maxBytes: maxDiskBytes, fileThreads: fileThreads, clock: clock),
            upstream: upstream, imageBase: imageBase, demoCovers: demoCovers,
            maxBytes: maxBytes, palettes: palettes, colourReading: colourReading
        )
    }

    /// The image and its colours, from disk or, on a miss, from upstream.
    public func image(for address: ArtworkAddress) async throws(ArtworkError) -> StoredArtwork {
        if let running = inFlight[address] {
            return try await running.value.get()
        }
        // Detached so that one caller going away does not cancel the fetch
        // the others are waiting on, and so decoding runs off this actor.
        let loader = self.loader
        let task = Task.detached { await loader.load(address) }
        inFlight[address] = task
        let result = await task.value
        // Only the request that started the task clears it, and only if a
        // newer one has not taken its place meanwhile.
        if inFlight[address] == task { inFlight[address] = nil }
        return try result.get()
    }

    /// The directory under the data directory that kept covers live in.
    public static let keptDirectoryName = "art-kept"

    /// Keeps the image at `address` for offline use: fetched (or taken from
    /// the cache) once, then stored outside the size budget, so it is
    /// served with no network for as long as the data directory lasts.
    /// Returns whether it had to be stored (false: it was kept already).
    /// The image is written only there (a copy already in the size-limited
    /// cache is copied), so keeping a whole archive's covers neither doubles
    /// their space nor pushes other covers out of the cache; their palettes
    /// are computed when a page first needs them, from the kept bytes.
    @discardableResult
    public nonisolated func keep(_ address: ArtworkAddress) async throws(ArtworkError) -> Bool {
        try await loader.keep(address)
    }

    /// Whether the image at `address` is kept for offline use.
    public nonisolated func isKept(_ address: ArtworkAddress) async -> Bool {
        await loader.cache.isKept(address)
    }

    /// How many covers are kept for offline use, and their size on disk.
    public nonisolated func keptTotals() async -> (images: Int, bytes: Int64) {
        await loader.cache.keptTotals()
    }

    /// The colours for an image, from the sidecar when present, otherwise
    /// by loading (and so possibly fetching) the image once.
    public func colours(for address: ArtworkAddress) async throws(ArtworkError) -> AlbumColours {
        if let colours = await loader.storedColours(for: address) { return colours }
        return try await image(for: address).colours
    }

    /// Colours already known, on disk or in the fleet's palettes; never
    /// fetches. For rendering a page without waiting on the network.
    public nonisolated func storedColours(for address: ArtworkAddress) async -> AlbumColours? {
        await loader.storedColours(for: address)
    }
}

extension ArtworkStore {
    /// The work behind one `image(for:)`, free of actor state so it can run
    /// concurrently for different addresses.
    struct Loader: Sendable {
        let cache: ArtworkDiskCache
        let upstream: ArtworkUpstream
        let imageBase: String
        let demoCovers: DemoCoverCatalogue
        let maxBytes: Int
        let palettes: (any PaletteStore)?
        let colourReading: ArtworkStore.ColourReading

        /// The palette from this instance's disk, else from the fleet's
        /// store (and then kept on disk too).
        func storedColours(for address: ArtworkAddress) async -> AlbumColours? {
            if let colours = await cache.colours(for: address) { return colours }
            guard let palettes, let shared = await palettes.palette(for: address) else { return nil }
            try? await cache.store(colours: shared, for: address)
            return shared
        }

        func load(_ address: ArtworkAddress) async -> Result<StoredArtwork, ArtworkError> {
            do throws(ArtworkError) {
                if let cached = await cache.bytes(for: address) {
                    return .success(await finish(address, cached.0, cached.1))
                }
                let bytes = try await obtain(address)
                guard let format = ImageFormat(sniffing: bytes) else { throw .notAnImage }
                // A failed cache write still serves the image; the next
                // request simply tries again.
                try? await cache.store(bytes: bytes, for: address)
                return .success(await finish(address, bytes, format))
            } catch {
                return .failure(error)
            }
        }

        /// `ArtworkStore.keep`: the image written under the kept root,
        /// from the cache when it is there, else from upstream.
        func keep(_ address: ArtworkAddress) async throws(ArtworkError) -> Bool {
            guard !address.isGenerated else { return false }
            if await cache.isKept(address) { return false }
            let bytes: Data
            if let cached = await cache.bytes(for: address) {
                bytes = cached.0
            } else {
                bytes = try await obtain(address)
                guard ImageFormat(sniffing: bytes) != nil else { throw .notAnImage }
            }
            do {
                try await cache.keep(bytes: bytes, for: address)
            } catch {
                throw .notStored(error.localizedDescription)
            }
            return true
        }

        private func finish(_ address: ArtworkAddress, _ bytes: Data, _ format: ImageFormat) async -> StoredArtwork {
            if let colours = await storedColours(for: address) {
                return StoredArtwork(address: address, bytes: bytes, format: format, colours: colours)
            }
            let colours = colourReading(bytes)
            try? await cache.store(colours: colours, for: address)
            await palettes?.store(colours, for: address)
            return StoredArtwork(address: address, bytes: bytes, format: format, colours: colours)
        }

        private func obtain(_ address: ArtworkAddress) async throws(ArtworkError) -> Data {
            if address.isGenerated {
                guard let cover = demoCovers.cover(for: address) else { throw .notFound }
                return try cover.pngData()
            }
            guard let url = address.upstreamURL(imageBase: imageBase) else { throw .notFound }
            let reply: (status: Int, body: Data)
            do {
                reply = try await upstream.fetch(url)
            } catch let error as ArtworkError {
                throw error
            } catch {
                throw .unreachable(String(describing: error))
            }
            switch reply.status {
            case 200..<300: break
            case 404, 410: throw .notFound
            default: throw .upstreamStatus(reply.status)
            }
            guard reply.body.count <= maxBytes else { throw .tooLarge }
            return reply.body
        }
    }
}

extension ArtworkStore {
    /// The bytes of each image at `addresses`, fetched concurrently, in
    /// order; nil where there is no address or the image could not be had.
    public nonisolated func bytes(of addresses: [ArtworkAddress?]) async -> [Data?] {
        await withTaskGroup(of: (Int, Data?).self) { group in
            for (index, address) in addresses.enumerated() {
                guard let address else { continue }
                group.addTask { (index, try? await self.image(for: address).bytes) }
            }
            var found = [Data?](repeating: nil, count: addresses.count)
            for await (index, bytes) in group { found[index] = bytes }
            return found
        }
    }
}
