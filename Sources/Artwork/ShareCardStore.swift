import Foundation
import VinylogueCore
import NIOPosix

/// A drawn card: its PNG bytes, and whether every cover it shows could be
/// had (only complete cards are kept).
public struct DrawnShareCard: Sendable, Hashable {
    public let bytes: Data
    public let isComplete: Bool
}

/// Share cards and widgets (any `DrawnCard`) as PNG files under
/// `<dataDirectory>/cards/<person>/<key>.png` (`<person>` a hash of whose
/// page it shows, so `forget(_:)` can delete one person's cards), drawn on
/// a miss and kept within a size limit like the art cache (the cards shown
/// least recently go first); and the small covers an SVG widget embeds
/// (`thumbnails`).
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
    public typealias DrawingObserver = @Sendable (any DrawnCard) -> Void

    /// 64 MiB: some 300 cards.
    public static let defaultMaxDiskBytes: Int64 = 64 << 20

    private let root: URL
    private let budget: ArtworkDiskBudget
    private let artwork: ArtworkStore
    private let threads: NIOThreadPool
    private let observer: DrawingObserver
    private var inFlight: [String: Task<Result<DrawnShareCard, ArtworkError>, Never>] = [:]
    /// How many times each person's cards were forgotten: a drawing that
    /// began before a `forget` and wrote after it is deleted again.
    private var forgotten: [String: Int] = [:]

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

    /// The card of `person`'s page as PNG: from disk when it was drawn
    /// before, else drawn now and, when complete, kept. With `keep` false (a
    /// card saying a page failed) the disk is neither read nor written.
    public func png(for card: some DrawnCard, of person: Username?, keep: Bool = true) async throws(ArtworkError) -> DrawnShareCard {
        let folder = Self.folder(of: person)
        let key = folder + "/" + card.key + (keep ? "" : "|unkept")
        if let running = inFlight[key] { return try await running.value.get() }
        let drawing = Drawing(root: root.appendingPathComponent(folder, isDirectory: true), budget: budget, budgetRoot: root,
                              artwork: artwork, threads: threads, observer: observer)
        let generation = forgotten[folder, default: 0]
        // Detached: one caller going away must not cancel the others' card.
        let task = Task.detached { await drawing.card(card, keep: keep) }
        inFlight[key] = task
        let result = await task.value
        if inFlight[key] == task { inFlight[key] = nil }
        if keep, forgotten[folder, default: 0] != generation {
            // Forgotten while it was drawn: its file must not outlive that.
            let url = fileURL(card, of: person)
            _ = try? await threads.runIfActive { try? FileManager.default.removeItem(at: url) }
        }
        return try result.get()
    }

    /// Deletes every card of `person`'s pages from disk (their account is
    /// deleted), and any being drawn as it finishes.
    public func forget(_ person: Username) async {
        let folder = Self.folder(of: person)
        forgotten[folder, default: 0] += 1
        let directory = root.appendingPathComponent(folder, isDirectory: true)
        _ = try? await threads.runIfActive { try? FileManager.default.removeItem(at: directory) }
    }

    /// The folder of `person`'s cards: a hash of their name's key, so no
    /// name becomes a path; cards of no one in particular go in `any`.
    static func folder(of person: Username?) -> String {
        person.map { NameHash("person\u{0}" + $0.key).hex } ?? "any"
    }

    /// The covers at `addresses` made small for embedding (an SVG widget's
    /// `data:` URIs): decoded, scaled to at most `side` pixels and encoded
    /// again as JPEG, on `threads`; nil where there is no address or the
    /// image could not be had. The bytes are the art store's own: nothing
    /// else can be named.
    public nonisolated func thumbnails(of addresses: [ArtworkAddress?], side: Int) async -> [Data?] {
        let covers = await artwork.bytes(of: addresses)
        return (try? await threads.runIfActive { () -> [Data?] in
            let decoding = ImageDecoding(maxSide: side)
            return covers.map { bytes in
                bytes.flatMap { try? decoding.pixels(from: $0) }.flatMap { try? ImageEncoding.jpeg($0, quality: 85) }
            }
        }) ?? addresses.map { _ in nil }
    }

    /// The file a card of `person`'s page is kept in.
    nonisolated func fileURL(_ card: some DrawnCard, of person: Username?) -> URL {
        root.appendingPathComponent(Self.folder(of: person), isDirectory: true).appendingPathComponent(card.key + ".png", isDirectory: false)
    }
}

extension ShareCardStore {
    /// The work behind one `png(for:)`, free of actor state.
    struct Drawing: Sendable {
        /// The person's folder the card is kept in.
        let root: URL
        let budget: ArtworkDiskBudget
        /// The folder the budget counts (every person's).
        let budgetRoot: URL
        let artwork: ArtworkStore
        let threads: NIOThreadPool
        let observer: DrawingObserver

        func card(_ card: some DrawnCard, keep: Bool) async -> Result<DrawnShareCard, ArtworkError> {
            let url = root.appendingPathComponent(card.key + ".png", isDirectory: false)
            if keep, let kept = try? await threads.runIfActive({ () -> Data? in
                guard let data = try? Data(contentsOf: url), ImageFormat(sniffing: data) == .png else { return nil }
                ArtworkDiskBudget.touch(url, at: artwork.clock.now)
                return data
            }) { return .success(DrawnShareCard(bytes: kept, isComplete: true)) }
            let addresses = card.drawnCovers
            let covers = await artwork.bytes(of: addresses)
            let budgetRoot = budgetRoot, budget = budget
            do {
                let drawn = try await threads.runIfActive { () throws -> DrawnShareCard in
                    let decoding = ImageDecoding(maxSide: type(of: card).coverSide)
                    let images = covers.map { bytes in bytes.flatMap { try? decoding.pixels(from: $0) } }
                    let png = try ImageEncoding.png(card.render(images: images))
                    // A place with no cover to draw is not missing one.
                    let isComplete = zip(addresses, images).allSatisfy { $0 == nil || $1 != nil }
                    // A failed write still serves the card; the next request draws it again.
                    if keep, isComplete, (try? ArtworkDiskCache.writeAtomically(png, to: url)) != nil {
                        ArtworkDiskBudget.touch(url, at: artwork.clock.now)
                        budget.wrote(png.count, under: budgetRoot)
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
    }
}
