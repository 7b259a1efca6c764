import Foundation
import Testing
@testable import Artwork

@Suite("Colours")
struct ColourExtractionTests {
    let extraction = ColourExtraction()

    @Test func contrastMatchesKnownWCAGValues() {
        #expect(contrastRatio(.white, .black) == 21)
        #expect(contrastRatio(.black, .white) == 21)
        #expect(contrastRatio(TestImages.red, TestImages.red) == 1)
        // Published values: #777777 on white is 4.48:1, #767676 is 4.54:1.
        #expect(abs(contrastRatio(RGB(hex: "#777777")!, .white) - 4.48) < 0.01)
        #expect(abs(contrastRatio(RGB(hex: "#767676")!, .white) - 4.54) < 0.01)
        // Pure red on white is 4.0:1, pure blue on white 8.59:1.
        #expect(abs(contrastRatio(RGB(hex: "#ff0000")!, .white) - 4.0) < 0.01)
        #expect(abs(contrastRatio(RGB(hex: "#0000ff")!, .white) - 8.59) < 0.01)
    }

    @Test func hexRoundTrips() {
        #expect(RGB(red: 0x1a, green: 0x2b, blue: 0x3c).hex == "#1a2b3c")
        #expect(RGB(hex: "#1A2B3C") == RGB(red: 0x1a, green: 0x2b, blue: 0x3c))
        #expect(RGB(hex: "1a2b3c") == nil)
        #expect(RGB(hex: "#1a2b3") == nil)
        #expect(RGB(hex: "#+1a2b3") == nil)
    }

    @Test func aRedCoverGetsAReddishBackground() throws {
        let colours = extraction.colours(fromImage: TestImages.png(TestImages.solid(TestImages.red)))
        let bg = colours.background
        #expect(!colours.isFallback)
        #expect(bg.red > 150 && bg.green < 80 && bg.blue < 80, "\(bg)")
    }

    @Test func aRedJPEGGetsAReddishBackgroundToo() {
        let bg = extraction.colours(fromImage: TestImages.jpeg(TestImages.solid(TestImages.red))).background
        #expect(bg.red > 150 && bg.green < 80 && bg.blue < 80, "\(bg)")
    }

    @Test func whiteBordersDoNotWin() {
        // A blue square filling a third of the area inside a wide white mount.
        let grid = TestImages.grid(width: 60, height: 60) { x, y in
            (20..<55).contains(x) && (15..<45).contains(y) ? RGB(red: 30, green: 60, blue: 200) : RGB(red: 250, green: 250, blue: 248)
        }
        let bg = extraction.dominantColour(in: grid)
        #expect(bg.blue > 150 && bg.red < 80, "\(bg)")
    }

    @Test func anAllBlackCoverStaysBlack() {
        let bg = extraction.dominantColour(in: TestImages.solid(RGB(red: 5, green: 5, blue: 8)))
        #expect(bg.relativeLuminance < 0.01, "\(bg)")
    }

    @Test func saturatedColourBeatsSomewhatLargerGrey() {
        let grid = TestImages.grid(width: 50, height: 50) { x, _ in x < 22 ? RGB(red: 230, green: 120, blue: 10) : RGB(red: 128, green: 128, blue: 128) }
        let bg = extraction.dominantColour(in: grid)
        #expect(bg.red > 200 && bg.blue < 60, "\(bg)")
    }

    @Test func textAlwaysMeetsAAOnAnyBackground() {
        var backgrounds: [RGB] = []
        for r in stride(from: 0, through: 255, by: 17) {
            for g in stride(from: 0, through: 255, by: 17) {
                for b in stride(from: 0, through: 255, by: 17) {
                    backgrounds.append(RGB(red: UInt8(r), green: UInt8(g), blue: UInt8(b)))
                }
            }
        }
        // The hardest cases: the greys either side of the white/black crossover.
        for v in 100...140 { backgrounds.append(RGB(red: UInt8(v), green: UInt8(v), blue: UInt8(v))) }
        backgrounds += [RGB(hex: "#777777")!, RGB(hex: "#ff0000")!, RGB(hex: "#00ff00")!, RGB(hex: "#0000ff")!, RGB(hex: "#ff00ff")!]
        for dominant in backgrounds {
            // The page's background is the cover's colour made lighter or darker where it must be.
            let colours = extraction.palette(background: dominant)
            let bg = colours.background
            #expect(contrastRatio(colours.text, bg) >= 4.5, "text on \(bg) (from \(dominant)): \(colours.text)")
            #expect(contrastRatio(colours.secondaryText, bg) >= 4.5, "secondary on \(bg) (from \(dominant)): \(colours.secondaryText)")
        }
    }

    @Test func secondaryTextIsSofterWhereThereIsRoom() {
        for bg in [RGB(hex: "#101020")!, RGB(hex: "#f0e8d8")!, RGB(hex: "#2050a0")!] {
            let colours = extraction.palette(background: bg)
            #expect(contrastRatio(colours.secondaryText, bg) < contrastRatio(colours.text, bg))
        }
    }

    @Test func textIsTintedTowardsTheBackgroundHue() {
        let colours = extraction.palette(background: RGB(hex: "#0a2a6a")!)
        // Near-white, but bluer than it is red.
        #expect(colours.text.blue > colours.text.red)
        #expect(colours.text.relativeLuminance > 0.7)
    }

    @Test func undecodableImagesGetTheFallbackPalette() {
        let colours = extraction.colours(fromImage: Data("<html>".utf8))
        #expect(colours == .fallback)
        #expect(colours.isFallback)
        #expect(contrastRatio(colours.text, colours.background) >= 4.5)
    }

    @Test func coloursEncodeAsHex() throws {
        let colours = extraction.palette(background: RGB(hex: "#1a2b3c")!)
        let json = String(decoding: try JSONEncoder().encode(colours), as: UTF8.self)
        #expect(json.contains(##""background":"#1a2b3c""##))
        #expect(try JSONDecoder().decode(AlbumColours.self, from: Data(json.utf8)) == colours)
    }
}
