import Artwork
import Foundation
import VinylogueCore

extension BenchCommand {
    /// "Cold share card render": the demo user's charts for a few weeks,
    /// each drawn into a 1200 × 630 card that is not on disk yet (covers
    /// already in the art cache, as they are once the page has been seen),
    /// through `ShareCardStore` as the server draws them: cover decoding,
    /// drawing, PNG encoding and the file write, on NIO's blocking pool.
    static func benchShareCards(weeks count: Int = 12) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-bench-cards-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date(timeIntervalSince1970: 1_760_000_000)
        let demo = DemoChartSource(clock: .fixed(now))
        let covers = DemoCoverCatalogue()
        let artwork = ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in (404, Data()) }, demoCovers: covers)
        let drawings = DrawingCount()
        let cards = ShareCardStore(dataDirectory: directory, artwork: artwork, onDrawing: { _ in drawings.add() })
        let user = DemoHistory.username
        let list = try await demo.chartList(for: user)
        var prepared: [ShareCard] = []
        for week in list.weeks.suffix(count * 4).enumerated().filter({ $0.offset % 4 == 0 }).map(\.element) {
            let chart = try await demo.chart(for: user, kind: .album, week: week)
            let top = chart.entries.prefix(9)
            let addresses = top.map { covers.register(artist: $0.artist, album: $0.name) }
            // Covers first, so the figure is the card's own cost.
            for address in addresses { _ = try? await artwork.image(for: address) }
            let labels = WeekLabels(timeZone: .gmt)
            prepared.append(ShareCard(title: user.value, highlight: "1 year ago",
                                      details: [labels.range(of: week), top.first.map { "#1 \($0.artist) – \($0.name)" } ?? "",
                                                "Week \(labels.weekNumber(of: week)) · \(chart.entries.count) albums"],
                                      covers: addresses))
        }
        var times: [Double] = []
        var bytes = 0
        for card in prepared {
            let start = ContinuousClock.now
            bytes += try await cards.png(for: card, of: nil).bytes.count
            times.append(Self.seconds(ContinuousClock.now - start) * 1000)
        }
        times.sort()
        let warmStart = ContinuousClock.now
        for card in prepared { _ = try await cards.png(for: card, of: nil) }
        let fromDisk = Self.seconds(ContinuousClock.now - warmStart) * 1000 / Double(max(1, prepared.count))
        // Where the time goes: drawing (Swift) against PNG encoding (libpng).
        let sample = prepared.last.map { $0.render(images: []) }
        var encoding: [Double] = []
        for _ in 0..<5 {
            guard let sample else { break }
            let start = ContinuousClock.now
            _ = try ImageEncoding.png(sample)
            encoding.append(Self.seconds(ContinuousClock.now - start) * 1000)
        }
        encoding.sort()
        print("Cold share card render (\(prepared.count) weeks of the demo user, \(drawings.value) drawn, "
            + "\(bytes / max(1, prepared.count) / 1000) kB each): p50 \(Self.format(Self.percentile(times, 0.5), 1)) ms, "
            + "max \(Self.format(times.last ?? 0, 1)) ms; read back from disk: \(Self.format(fromDisk, 2)) ms each; "
            + "PNG encoding alone: p50 \(Self.format(Self.percentile(encoding, 0.5), 1)) ms")
    }
}

/// Counts drawings reported by `ShareCardStore`, from any thread.
private final class DrawingCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
