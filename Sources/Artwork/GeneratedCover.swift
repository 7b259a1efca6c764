import Foundation
import VinylogueCore

/// A cover drawn from an album's names, for offline demo albums that have no
/// Last.fm art. The same (artist, album) always gives the same PNG bytes.
///
/// The design is picked and coloured by a `SplitMix64` seeded from a
/// `NameHash` of the names: one of four layouts (bands, rings, sunset,
/// split) in a dark or light ground with two accents related by hue.
public struct GeneratedCover: Sendable, Hashable {
    public let artist: String
    public let album: String

    /// Covers are square, this many pixels a side.
    public static let side = 300

    public init(artist: String, album: String) {
        self.artist = artist
        self.album = album
    }

    /// Case and surrounding spaces do not make a different album, as on Last.fm.
    var key: String {
        func normal(_ s: String) -> String { s.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
        // U+0000 cannot occur in a name, so ("ab", "c") and ("a", "bc") differ.
        return normal(artist) + "\u{0}" + normal(album)
    }

    /// `/art/demo/<hash>.png`.
    public var address: ArtworkAddress {
        ArtworkAddress(size: .demo, hash: NameHash(key).hex, ext: .png)!
    }

    /// The cover as PNG bytes, `side` pixels square.
    public func pngData(side: Int = Self.side) throws(ArtworkError) -> Data {
        try ImageEncoding.png(render(side: side))
    }

    /// The cover's pixels. The design is drawn in a unit square, so any side
    /// gives the same picture at another resolution.
    public func render(side: Int = Self.side) -> PixelGrid {
        let design = Design(seed: NameHash(key).seed)
        var rgb = [UInt8](repeating: 0, count: side * side * 3)
        let size = Double(side)
        // 2×2 supersampling smooths circle edges. Plain scalar arithmetic:
        // generic SIMD made a debug build's cover cost 125 ms, a cover per
        // image the tests' fake Last.fm serves.
        rgb.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<side {
                let top = (Double(y) + 0.25) / size, bottom = (Double(y) + 0.75) / size
                for x in 0..<side {
                    let left = (Double(x) + 0.25) / size, right = (Double(x) + 0.75) / size
                    var sum = Colour.zero
                    sum.add(design.colour(atX: left, y: top))
                    sum.add(design.colour(atX: right, y: top))
                    sum.add(design.colour(atX: left, y: bottom))
                    sum.add(design.colour(atX: right, y: bottom))
                    let c = RGB(unit: sum.r / 4, sum.g / 4, sum.b / 4)
                    let i = (y * side + x) * 3
                    pixels[i] = c.red; pixels[i + 1] = c.green; pixels[i + 2] = c.blue
                }
            }
        }
        return PixelGrid(width: side, height: side, rgb: rgb)!
    }
}

/// A colour with components in 0...1, as the design mixes them.
private struct Colour {
    var r: Double, g: Double, b: Double

    static let zero = Colour(r: 0, g: 0, b: 0)

    init(r: Double, g: Double, b: Double) {
        self.r = r; self.g = g; self.b = b
    }

    init(_ c: RGB) {
        self.init(r: Double(c.red) / 255, g: Double(c.green) / 255, b: Double(c.blue) / 255)
    }

    mutating func add(_ other: Colour) {
        r += other.r; g += other.g; b += other.b
    }

    /// `self` moved towards `other` by `t` (0: self, 1: other).
    func mixed(towards other: Colour, by t: Double) -> Colour {
        Colour(r: r + (other.r - r) * t, g: g + (other.g - g) * t, b: b + (other.b - b) * t)
    }
}

/// The drawing itself: a layout and its colours, evaluated per point in a
/// unit square (y grows downwards).
private struct Design {
    enum Layout: CaseIterable { case bands, rings, sunset, split }

    let layout: Layout
    let ground: Colour
    let groundShade: Colour
    let accent: Colour
    let second: Colour
    let centreX: Double
    let centreY: Double
    let radius: Double
    let count: Int
    /// The split's slope: the tangent of its angle, worked out once.
    let slope: Double
    let cuts: [Double]

    init(seed: UInt64) {
        var dice = SplitMix64(seed: seed)
        layout = Layout.allCases[Int(dice.next() % UInt64(Layout.allCases.count))]
        let hue = dice.unit() * 360
        let dark = dice.unit() < 0.6
        // Accents sit at a pleasing distance on the wheel: complement, split
        // complement or a near neighbour.
        let offsets: [Double] = [180, 150, 210, 35, -35]
        let accentHue = hue + offsets[Int(dice.next() % UInt64(offsets.count))]
        if dark {
            ground = Colour(RGB(hue: hue, saturation: 0.35 + dice.unit() * 0.3, lightness: 0.14 + dice.unit() * 0.1))
            groundShade = Colour(RGB(hue: hue + 20, saturation: 0.4, lightness: 0.08))
        } else {
            ground = Colour(RGB(hue: hue, saturation: 0.25 + dice.unit() * 0.2, lightness: 0.84 + dice.unit() * 0.06))
            groundShade = Colour(RGB(hue: hue - 15, saturation: 0.3, lightness: 0.72))
        }
        accent = Colour(RGB(hue: accentHue, saturation: 0.6 + dice.unit() * 0.25, lightness: 0.5 + dice.unit() * 0.1))
        second = Colour(RGB(hue: hue, saturation: 0.5 + dice.unit() * 0.3, lightness: dark ? 0.62 : 0.38))
        centreX = 0.3 + dice.unit() * 0.4
        centreY = 0.3 + dice.unit() * 0.4
        radius = 0.18 + dice.unit() * 0.17
        count = 3 + Int(dice.next() % 5)
        let angle = (dice.unit() - 0.5) * .pi * 0.6
        slope = tan(angle)
        cuts = (0..<8).map { _ in dice.unit() }.sorted()
    }

    func colour(atX x: Double, y: Double) -> Colour {
        // Every layout sits on a soft vertical gradient.
        let base = ground.mixed(towards: groundShade, by: y * 0.8)
        let distance = Self.distance(x - centreX, y - centreY)
        switch layout {
        case .bands:
            // Stripes of uneven width in the lower part, colours alternating.
            let top = 0.45 + cuts[0] * 0.2
            guard y > top else { return base }
            let band = Int((y - top) / (1 - top) * Double(count * 2))
            if band % 2 == 1 { return base }
            return band % 4 == 0 ? accent : second
        case .rings:
            guard distance < radius * 2 else { return base }
            let ring = Int(distance / (radius * 2) * Double(count * 2))
            if ring % 2 == 1 { return base }
            return ring == 0 ? second : accent
        case .sunset:
            // A sun cut by horizontal gaps that thicken towards its base.
            guard distance < radius * 1.4 else { return base }
            let fromTop = (y - (centreY - radius * 1.4)) / (radius * 2.8)
            let gap = fromTop > 0.5 && (fromTop * Double(count * 3)).truncatingRemainder(dividingBy: 1) < (fromTop - 0.5) * 1.2
            if gap { return base }
            return accent.mixed(towards: second, by: fromTop)
        case .split:
            // A tilted edge divides the square; a small disc rides the edge.
            let edge = 0.5 + (x - 0.5) * slope
            let small = Self.distance(x - centreX, y - edge)
            if small < radius * 0.45 { return second }
            return y > edge ? accent.mixed(towards: groundShade, by: (y - edge) * 0.9) : base
        }
    }

    /// The length of (dx, dy).
    static func distance(_ dx: Double, _ dy: Double) -> Double {
        (dx * dx + dy * dy).squareRoot()
    }
}
