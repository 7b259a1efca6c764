import Foundation

/// Picks a page palette from a cover: the dominant colour as background and
/// text colours that meet WCAG AA contrast against it.
public struct ColourExtraction: Sendable {
    /// WCAG 2.x AA for normal text.
    public static let minimumContrast = 4.5

    public init() {}

    /// Decodes `bytes` and extracts colours; the fallback palette when the
    /// bytes are not a decodable JPEG or PNG.
    public func colours(fromImage bytes: Data, decoding: ImageDecoding = ImageDecoding()) -> AlbumColours {
        guard let grid = try? decoding.pixels(from: bytes) else { return .fallback }
        return colours(from: grid)
    }

    /// The palette for a decoded cover.
    public func colours(from grid: PixelGrid) -> AlbumColours {
        palette(background: dominantColour(in: grid))
    }

    /// The colour that best stands for the cover.
    ///
    /// Pixels are binned by their top three bits per channel (512 bins). Each
    /// pixel adds a weight that favours saturated, mid-lightness colours: the
    /// eye reads a red cover on a grey field as "red" even when grey covers
    /// more area. Near-white and near-black pixels (scanned borders, letterbox
    /// bars) are left out unless they are nearly all there is. The winner is
    /// the mean of the real pixels in the heaviest bin, not the bin's corner.
    public func dominantColour(in grid: PixelGrid) -> RGB {
        struct Bin { var weight = 0.0; var r = 0, g = 0, b = 0, n = 0 }
        let pixels = grid.pixels
        func isExtreme(_ p: RGB) -> Bool {
            let high = max(p.red, p.green, p.blue), low = min(p.red, p.green, p.blue)
            return (low >= 230 && high - low < 25) || high <= 25
        }
        let ordinary = pixels.count(where: { !isExtreme($0) })
        // Below 10% of the area, colour is an accent on a black/white cover.
        let skipExtremes = ordinary * 10 >= pixels.count
        var bins = [Bin](repeating: Bin(), count: 512)
        for p in pixels where !(skipExtremes && isExtreme(p)) {
            let (_, saturation, lightness) = p.hsl
            let midness = 1 - abs(2 * lightness - 1)
            let index = Int(p.red >> 5) << 6 | Int(p.green >> 5) << 3 | Int(p.blue >> 5)
            bins[index].weight += 0.5 + saturation * midness
            bins[index].r += Int(p.red)
            bins[index].g += Int(p.green)
            bins[index].b += Int(p.blue)
            bins[index].n += 1
        }
        guard let best = bins.max(by: { $0.weight < $1.weight }), best.n > 0 else {
            return AlbumColours.fallback.background
        }
        return RGB(
            red: UInt8((best.r + best.n / 2) / best.n),
            green: UInt8((best.g + best.n / 2) / best.n),
            blue: UInt8((best.b + best.n / 2) / best.n)
        )
    }

    /// Text colours for `background`: near-white or near-black tinted towards
    /// the background's hue, whichever contrasts more, pushed to the pure
    /// extreme as far as needed to reach 4.5:1. That is always possible:
    /// contrast(white, c) × contrast(black, c) = 21, so one of them is ≥ √21.
    public func palette(background: RGB, isFallback: Bool = false) -> AlbumColours {
        let (hue, saturation, _) = background.hsl
        let tint = min(saturation, 0.35)
        let lightWins = contrastRatio(.white, background) >= contrastRatio(.black, background)
        let extreme: RGB = lightWins ? .white : .black
        let tinted = RGB(hue: hue, saturation: tint, lightness: lightWins ? 0.95 : 0.10)
        let text = strongest(from: tinted, towards: extreme, on: background)
        let secondary = softened(text, on: background)
        return AlbumColours(background: background, text: text, secondaryText: secondary, isFallback: isFallback)
    }

    /// The first colour on the way from `start` to `extreme` that reaches the minimum.
    private func strongest(from start: RGB, towards extreme: RGB, on background: RGB) -> RGB {
        for step in 0...20 {
            let candidate = start.mixed(with: extreme, amount: Double(step) / 20)
            if contrastRatio(candidate, background) >= Self.minimumContrast { return candidate }
        }
        return extreme
    }

    /// `text` moved as far towards the background (at most 45%) as contrast allows.
    private func softened(_ text: RGB, on background: RGB) -> RGB {
        // Luminance is monotonic along the mix, so bisection finds the edge.
        var low = 0.0, high = 0.45
        if contrastRatio(text.mixed(with: background, amount: high), background) >= Self.minimumContrast {
            return text.mixed(with: background, amount: high)
        }
        for _ in 0..<16 {
            let middle = (low + high) / 2
            if contrastRatio(text.mixed(with: background, amount: middle), background) >= Self.minimumContrast {
                low = middle
            } else {
                high = middle
            }
        }
        // Rounding to 8 bits can cross the line; check the colour we return.
        let candidate = text.mixed(with: background, amount: low)
        return contrastRatio(candidate, background) >= Self.minimumContrast ? candidate : text
    }
}
