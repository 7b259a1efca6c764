import Foundation
import NIOPosix
import Synchronization
import Testing
import VinylogueCore
@testable import Artwork

/// The width and height an encoded PNG declares in its IHDR chunk.
func pngDimensions(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
          bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
    func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (int(16), int(20))
}

@Suite struct BitmapFontTests {
    @Test func theGlyphRendererDrawsKnownPixels() {
        var canvas = PixelCanvas(width: 14, height: 11, background: .black)
        let drawn = canvas.draw(text: "Il", x: 1, y: 1, scale: 1, colour: .white)
        #expect(drawn == 11)
        // "I" is .###. / ..#.. ×5 / .###.; "l" starts 6 columns on: .##.. / ..#.. ×5 / .###.
        let lit = (0..<11).map { y in String((0..<14).map { canvas[$0, y] == .white ? "#" : "." }) }
        #expect(lit == [
            "..............",
            "..###...##....",
            "...#.....#....",
            "...#.....#....",
            "...#.....#....",
            "...#.....#....",
            "...#.....#....",
            "..###...###...",
            "..............",
            "..............",
            "..............",
        ])
    }

    @Test func scaledGlyphsAreBlocksAndDescendersGoBelowTheBaseline() {
        var canvas = PixelCanvas(width: 20, height: 30, background: .black)
        canvas.draw(text: "g", x: 0, y: 0, scale: 3, colour: .white)
        // Row 2 of "g" is .####: columns 1...4 lit, each 3 × 3 pixels.
        #expect(canvas[2, 6] == .black)
        #expect(canvas[3, 6] == .white && canvas[14, 8] == .white)
        #expect(canvas[15, 6] == .black)
        // Row 8 (below the baseline) is .###.
        #expect(canvas[4, 25] == .white && canvas[1, 25] == .black)
    }

    @Test func unknownCharactersAreABoxAndAccentsFallBackToTheirLetter() {
        let font = BitmapFont.standard
        #expect(font.glyph(for: "é") == font.glyph(for: "e"))
        #expect(font.glyph(for: "Å") == font.glyph(for: "A"))
        #expect(font.glyph(for: "€") == font.missing)
        #expect(font.glyph(for: "漢") == font.missing)
        #expect(!font.hasGlyph(for: "€") && font.hasGlyph(for: "·") && font.hasGlyph(for: "–"))
        // Every printable ASCII character has a glyph of its own.
        for scalar in 0x20...0x7E {
            #expect(font.hasGlyph(for: Character(UnicodeScalar(scalar)!)), "no glyph for \(scalar)")
        }
    }

    @Test func textIsWrappedAtSpacesAndCutWithAnEllipsis() {
        let fitting = TextFitting(font: .standard)
        #expect(fitting.wrap("Live at The Electric Ballroom", columns: 12) == ["Live at The", "Electric", "Ballroom"])
        let fitted = fitting.fit(String(repeating: "word ", count: 40), width: 300, scales: 2...4, maxLines: 2)
        #expect(fitted.scale == 2 && fitted.lines.count == 2 && fitted.lines[1].hasSuffix("…"))
        #expect(fitting.fit("RJ", width: 458, scales: 4...9, maxLines: 2).scale == 9)
    }
}

@Suite struct ShareCardTests {
    /// Small solid covers from a stand-in Last.fm image host: cheap to
    /// decode (generated demo covers take a quarter of a second each in a
    /// debug build), so these tests spend their time on the cards. Any
    /// other address is 404.
    func covers(_ count: Int) -> (ArtworkUpstream, [ArtworkAddress]) {
        let addresses = (0..<count).map { ArtworkAddress(size: .extraLarge, hash: String(format: "%032x", $0 + 1), ext: .png)! }
        let upstream = ArtworkUpstream { url in
            guard let index = addresses.firstIndex(where: { url.hasSuffix("/" + $0.fileName) }) else { return (404, Data()) }
            let colour = RGB(red: UInt8(60 + index * 20), green: UInt8(220 - index * 15), blue: 120)
            return (200, TestImages.png(TestImages.solid(colour, side: 60)))
        }
        return (upstream, addresses)
    }

    func card(week: String, covers: [ArtworkAddress]) -> ShareCard {
        ShareCard(title: "demo", highlight: "3 years ago", details: [week, "#1 Artist 0 – Album 0, and 8 more"], covers: covers)
    }

    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-cards-\(UUID().uuidString)")
    }

    @Test func aCardIsA1200By630PNG() async throws {
        let (upstream, addresses) = covers(9)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork)
        let drawn = try await store.png(for: card(week: "Week 28 · Jul 5 – 12, 2020", covers: addresses), of: nil)
        #expect(drawn.isComplete)
        let size = try #require(pngDimensions(drawn.bytes))
        #expect(size.width == 1200 && size.height == 630)
        // It decodes.
        let pixels = try ImageDecoding(maxSide: 1200).pixels(from: drawn.bytes)
        #expect(pixels.width == 1200 && pixels.height == 630)
        // The collage's corner is a cover, not the background or a stand-in record.
        #expect(![ShareCard.Palette.background, ShareCard.Palette.tile].contains(pixels[10, 10]))
    }

    @Test func differentWeeksGiveDifferentCards() async throws {
        let (upstream, addresses) = covers(4)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork)
        let july = card(week: "Week 28 · Jul 5 – 12, 2020", covers: addresses)
        let later = card(week: "Week 29 · Jul 12 – 19, 2020", covers: Array(addresses.reversed()))
        #expect(july.key != later.key)
        let a = try await store.png(for: july, of: nil), b = try await store.png(for: later, of: nil)
        #expect(a.bytes != b.bytes)
        // Text alone changes the picture too.
        let textOnly = card(week: "Week 28 · Jul 5 – 12, 2020", covers: []), otherText = card(week: "Week 30", covers: [])
        #expect(try await store.png(for: textOnly, of: nil).bytes != store.png(for: otherText, of: nil).bytes)
    }

    @Test func aSecondRequestIsServedFromDiskWithoutDrawing() async throws {
        let (upstream, addresses) = covers(9)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let drawings = Mutex(0)
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork, onDrawing: { _ in drawings.withLock { $0 += 1 } })
        let shown = card(week: "Week 28", covers: addresses)
        let first = try await store.png(for: shown, of: nil)
        let second = try await store.png(for: shown, of: nil)
        #expect(drawings.withLock { $0 } == 1)
        #expect(first == second)
        #expect(FileManager.default.fileExists(atPath: store.fileURL(shown, of: nil).path))
        // A new store on the same directory (a restarted server) reads it back.
        let restarted = ShareCardStore(dataDirectory: directory, artwork: artwork, onDrawing: { _ in drawings.withLock { $0 += 1 } })
        #expect(try await restarted.png(for: shown, of: nil) == first)
        #expect(drawings.withLock { $0 } == 1)
    }

    @Test func concurrentIdenticalRequestsDrawOnce() async throws {
        let (upstream, addresses) = covers(4)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let drawings = Mutex(0)
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork, onDrawing: { _ in drawings.withLock { $0 += 1 } })
        let shown = card(week: "Week 28", covers: addresses)
        try await withThrowingTaskGroup(of: DrawnShareCard.self) { group in
            for _ in 0..<8 { group.addTask { try await store.png(for: shown, of: nil) } }
            for try await drawn in group { #expect(pngDimensions(drawn.bytes)?.width == 1200) }
        }
        #expect(drawings.withLock { $0 } == 1)
    }

    @Test func aCardMissingACoverIsServedButNotKept() async throws {
        let (upstream, addresses) = covers(3)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let drawings = Mutex(0)
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork, onDrawing: { _ in drawings.withLock { $0 += 1 } })
        // The fourth cover is an image the upstream does not have.
        let unreachable = try #require(ArtworkAddress(size: .extraLarge, hash: String(repeating: "ab", count: 16), ext: .png))
        let shown = card(week: "Week 28", covers: addresses + [unreachable])
        let first = try await store.png(for: shown, of: nil)
        #expect(!first.isComplete && pngDimensions(first.bytes)?.height == 630)
        _ = try await store.png(for: shown, of: nil)
        #expect(drawings.withLock { $0 } == 2)
        #expect(!FileManager.default.fileExists(atPath: store.fileURL(shown, of: nil).path))
    }

    @Test func drawingRunsOnTheBlockingThreadsOnly() async throws {
        let (upstream, addresses) = covers(1)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let artwork = ArtworkStore(dataDirectory: directory, upstream: upstream)
        // A pool that was never started runs nothing: the card cannot be drawn anywhere else.
        let stopped = NIOThreadPool(numberOfThreads: 1)
        let store = ShareCardStore(dataDirectory: directory, artwork: artwork, threads: stopped)
        await #expect(throws: ArtworkError.self) { try await store.png(for: card(week: "Week 28", covers: addresses), of: nil) }
    }
}
