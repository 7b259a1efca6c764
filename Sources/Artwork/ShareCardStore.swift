import Foundation
import VinylogueCore
import NIOPosix

/// A drawn share card: its PNG bytes, and whether every cover it shows
/// could be had (only complete cards are kept).
public struct DrawnShareCard: Sendable, Hashable {
    public let bytes: Data
    public let isComplete: Bool
}

/// Share cards as PNG files under `<dataDirectory>/cards/<key>.png`, drawn
/// on a miss and kept within a size limit like the art cache (the cards
/// shown least recently go first).
///
/// - Covers come only from `ArtworkStore`, by `ArtworkAddress`: a card can
///   name no other image, so no request can make the server fetch an
///   arbitrary URL.
/// - Decoding covers, drawing and PNG encoding are blocking CPU work on big
///   images (tens of milliseconds), so they run on `threads` (NIO's pool
///   for blocking work), never on Swift's cooperative pool, as file reads
///   and writes do.
/// - Only complete cards are kept: when a cover could not be had, the card
///   is drawn with a record in its place and served, but not stored, so
///   the next request tries the cover again.
/// - Identical requests in flight share one drawing.
public actor ShareCardStore {
    /// Called after each drawing (not for cards read from disk); tests
    /// count drawings with it.
    public typealias DrawingObserver = @Sendable (ShareCard) -> Void

    /// 64 MiB: some 300 cards.
    public static let defaultMaxDiskBytes: Int64 = 64 << 20

    private let root: URL
    private let budget: ArtworkDiskBudget
    private let artwork: ArtworkStore
    private let threads: NIOThreadPool
    private let observer: DrawingObserver
    private var inFlight: [String: Task<Result<DrawnShareCard, ArtworkError>, Never>] = [:]

    /// - Parameters:
    ///   - dataDirectory: files go under `<dataDirectory>/cards/`.
    ///   - artwork: where covers come from.
    ///   - maxDiskBytes: how large `cards/` may grow (nil: no limit).
    ///   - threads: where decoding, drawing, encoding and file calls run.
    ///   - onDrawing: called after each card drawn (not read from disk).
    public init(dataDirectory: URL, artwork: ArtworkStore, maxDiskBytes: Int64? = ShareCardStore.defaultMaxDiskBytes,
                threads: NIOThreadPool = .singleton, onDrawing: @escaping DrawingObserver = { _ in }) {
        root = dataDirectory.appendingPathComponent("cards", isDirectory: true)
        budget = ArtworkDiskBudget(limit: maxDiskBytes)
        self.artwork = artwork
        self.threads = threads
        observer = onDrawing
    }

    /// The card as PNG: from disk when it was drawn before, else drawn now
    /// and, when complete, kept. With `keep` false (a card saying a page
    /// failed) the disk is neither read nor written.
    public func png(for card: ShareCard, keep: Bool = true) async throws(ArtworkError) -> DrawnShareCard {
        let key = card.key + (keep ? "" : "|unkept")
        if let running = inFlight[key] { return try await running.value.get() }
        let drawing = Drawing(root: root, budget: budget, artwork: artwork, threads: threads, observer: observer)
        // Detached: one caller going away must not cancel the others' card.
        let task = Task.detached { await drawing.card(card, keep: keep) }
        inFlight[key] = task
        let result = await task.value
        if inFlight[key] == task { inFlight[key] = nil }
        return try result.get()
    }

    /// The file a card is kept in.
    nonisolated func fileURL(_ card: ShareCard) -> URL { root.appendingPathComponent(card.key + ".png", isDirectory: false) }
}

extension ShareCardStore {
    /// The work behind one `png(for:)`, free of actor state.
    struct Drawing: Sendable {
        let root: URL
        let budget: ArtworkDiskBudget
        let artwork: ArtworkStore
        let threads: NIOThreadPool
        let observer: DrawingObserver

        func card(_ card: ShareCard, keep: Bool) async -> Result<DrawnShareCard, ArtworkError> {
            let url = root.appendingPathComponent(card.key + ".png", isDirectory: false)
            if keep, let kept = try? await threads.runIfActive({ () -> Data? in
                guard let data = try? Data(contentsOf: url), ImageFormat(sniffing: data) == .png else { return nil }
                ArtworkDiskBudget.touch(url, at: artwork.clock.now)
                return data
            }) { return .success(DrawnShareCard(bytes: kept, isComplete: true)) }
            let covers = await coverBytes(for: card)
            let complete = covers.allSatisfy { $0 != nil }
            let root = root, budget = budget
            do {
                let drawn = try await threads.runIfActive { () throws -> DrawnShareCard in
                    let decoding = ImageDecoding(maxSide: ShareCard.height)
                    let images = covers.map { bytes in bytes.flatMap { try? decoding.pixels(from: $0) } }
                    let png = try ImageEncoding.png(card.render(images: images))
                    let isComplete = complete && images.allSatisfy { $0 != nil }
                    // A failed write still serves the card; the next request draws it again.
                    if keep, isComplete, (try? ArtworkDiskCache.writeAtomically(png, to: url)) != nil {
                        ArtworkDiskBudget.touch(url, at: artwork.clock.now)
                        budget.wrote(png.count, under: root)
                    }
                    return DrawnShareCard(bytes: png, isComplete: isComplete)
                }
                observer(card)
                return .success(drawn)
            } catch let error as ArtworkError {
                return .failure(error)
            } catch {
                return .failure(.encodingFailed)
            }
        }

        /// The bytes of each cover the collage shows, fetched concurrently
        /// through the art store; nil where one could not be had.
        private func coverBytes(for card: ShareCard) async -> [Data?] {
            let addresses = Array(card.covers.prefix(card.collageCount))
            return await withTaskGroup(of: (Int, Data?).self) { group in
                for (index, address) in addresses.enumerated() {
                    group.addTask { [artwork] in (index, try? await artwork.image(for: address).bytes) }
                }
                var found = [Data?](repeating: nil, count: addresses.count)
                for await (index, bytes) in group { found[index] = bytes }
                return found
            }
        }
    }
}
