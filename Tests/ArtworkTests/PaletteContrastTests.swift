import Foundation
import Testing
import VinylogueCore
@testable import Artwork

/// Issue 42: every text colour the album page draws from a cover's palette
/// keeps WCAG AA contrast on the background it sits on, in both colour
/// schemes, for covers of every hue, saturation and lightness, and for the
/// demo's real covers.
@Suite("Palette contrast")
struct PaletteContrastTests {
    let extraction = ColourExtraction()

    /// Dominant colours a cover can give: a grid over hue, saturation and
    /// lightness, and more drawn at random from a fixed seed (so a failure
    /// names the same colours on every run).
    static let generatedBackgrounds: [RGB] = {
        var colours: [RGB] = []
        for hue in stride(from: 0.0, to: 360, by: 15) {
            for saturation in [0, 0.25, 0.5, 0.75, 1.0] {
                for lightness in stride(from: 0.0, through: 1.0, by: 0.05) {
                    colours.append(RGB(hue: hue, saturation: saturation, lightness: lightness))
                }
            }
        }
        var random = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            colours.append(RGB(red: UInt8(truncatingIfNeeded: random.next()),
                               green: UInt8(truncatingIfNeeded: random.next()),
                               blue: UInt8(truncatingIfNeeded: random.next())))
        }
        // The mid greys where white and black text both come closest to failing,
        // and the two colours the scan found.
        for v in 100...140 { colours.append(RGB(red: UInt8(v), green: UInt8(v), blue: UInt8(v))) }
        colours += [RGB(hex: "#c82ed7")!, RGB(hex: "#26b04e")!]
        return colours
    }()

    /// The dominant colour of every album cover in the demo. Drawn 40
    /// pixels a side rather than the served 300: the design is the same at
    /// any size, and a debug build takes minutes to draw them all full size.
    static let demoBackgrounds: [RGB] = {
        let albums = Set(DemoHousehold().members.flatMap { $0.history.catalog.albums.map { [$0.artist, $0.name] } })
        return albums.sorted { $0.joined() < $1.joined() }.map { names in
            ColourExtraction().dominantColour(in: GeneratedCover(artist: names[0], album: names[1]).render(side: 40))
        }
    }()

    /// The pairs below AA, for the palettes of `backgrounds`, in both schemes.
    func unreadable(on backgrounds: [RGB]) -> [String] {
        var failures: [String] = []
        for dominant in backgrounds {
            let colours = extraction.palette(background: dominant)
            for scheme in ColourScheme.allCases {
                for pair in colours.pairings(in: scheme) where !pair.isReadable {
                    failures.append("cover colour \(dominant), \(scheme): \(pair)")
                }
            }
        }
        return failures
    }

    @Test func everyTextOnGeneratedPalettesMeetsAA() {
        let failures = unreadable(on: Self.generatedBackgrounds)
        #expect(failures.isEmpty, "\(failures.count) pairs below AA, among them:\n\(failures.prefix(12).joined(separator: "\n"))")
    }

    @Test func everyTextOnTheDemoCoversMeetsAA() {
        #expect(Self.demoBackgrounds.count >= 30)
        let failures = unreadable(on: Self.demoBackgrounds)
        #expect(failures.isEmpty, "\(failures.count) pairs below AA, among them:\n\(failures.prefix(12).joined(separator: "\n"))")
    }

    /// The main text reaches AAA (7:1), so the secondary colour can be
    /// visibly softer and still meet AA: a page keeps its two levels.
    @Test func textLeavesRoomForASofterSecondary() {
        var failures: [String] = []
        for dominant in Self.generatedBackgrounds + Self.demoBackgrounds {
            let colours = extraction.palette(background: dominant)
            let text = contrastRatio(colours.text, colours.background)
            let secondary = contrastRatio(colours.secondaryText, colours.background)
            if text < 7 || secondary >= text {
                failures.append("\(dominant) → \(colours.background): text \(text), secondary \(secondary)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) palettes, among them:\n\(failures.prefix(12).joined(separator: "\n"))")
    }

    /// The page is still the cover's colour: only lightness moves.
    @Test func theBackgroundKeepsTheCoversHueAndSaturation() {
        var failures: [String] = []
        for dominant in Self.generatedBackgrounds + Self.demoBackgrounds {
            let background = extraction.palette(background: dominant).background
            let (hue, saturation, _) = dominant.hsl
            let moved = background.hsl
            // Hue and saturation mean little for near-greys, and 8-bit rounding
            // shifts them most in very dark or very light colours.
            let chroma = Int(max(background.red, background.green, background.blue)) - Int(min(background.red, background.green, background.blue))
            guard saturation > 0.15, chroma >= 48 else { continue }
            let hueShift = min(abs(moved.hue - hue), 360 - abs(moved.hue - hue))
            if hueShift > 4 || abs(moved.saturation - saturation) > 0.08 {
                failures.append("\(dominant) → \(background): hue \(hue) → \(moved.hue), saturation \(saturation) → \(moved.saturation)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) backgrounds, among them:\n\(failures.prefix(12).joined(separator: "\n"))")
    }

    /// Share cards and the widget do not take a cover's palette: they are
    /// drawn in the house colours, which meet AA too.
    @Test func theHouseColoursOfCardsAndWidgetsMeetAA() {
        typealias Palette = ShareCard.Palette
        for (name, colour) in [("text", Palette.text), ("muted", Palette.muted), ("accent", Palette.accent)] {
            #expect(contrastRatio(colour, Palette.background) >= 4.5, "\(name) on the card's background")
        }
    }
}
