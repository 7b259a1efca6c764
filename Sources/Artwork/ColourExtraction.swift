import Foundation

/// Picks a page palette from a cover: the dominant colour, made lighter or
/// darker where it must be, as background, and text colours that meet WCAG
/// AA contrast against it (the main text AAA).
public struct ColourExtraction: Sendable {
    /// WCAG 2.x AA for normal text: what every text colour reaches.
    public static let minimumContrast = 4.5
    /// WCAG 2.x AAA: what the main text colour reaches, so that the
    /// secondary one can be softer and still reach `minimumContrast`.
    public static let textContrast = 7.0

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

    /// Text colours for a cover whose dominant colour is `dominant`.
    ///
    /// The text is near-white or near-black tinted towards the cover's hue
    /// (tint at most 35% saturation, so it reads as white or black). The
    /// background is the dominant colour with only its HSL lightness moved,
    /// the least it takes for that text to reach `textContrast` (7:1, WCAG
    /// AAA) — towards dark under light text or towards light under dark
    /// text, whichever is the smaller move; hue and saturation stay the
    /// cover's. A mid-tone (the hardest case: white and black both reach only
    /// about 4.6:1 on it) becomes a darker or lighter shade of itself. The
    /// AAA aim leaves room for `secondaryText`, the text moved towards the
    /// background as far as AA (4.5:1) allows, to look softer than the text.
    /// A move always ends: light text on black, or dark text on white, is over 16:1.
    public func palette(background dominant: RGB, isFallback: Bool = false) -> AlbumColours {
        let (hue, saturation, lightness) = dominant.hsl
        let tint = min(saturation, 0.35)
        let lightText = RGB(hue: hue, saturation: tint, lightness: 0.95)
        let darkText = RGB(hue: hue, saturation: tint, lightness: 0.10)
        let darker = shade(of: dominant, towards: 0, under: lightText)
        let lighter = shade(of: dominant, towards: 1, under: darkText)
        let darkerMove = lightness - darker.lightness, lighterMove = lighter.lightness - lightness
        // Both moves cannot be 0 (the two contrasts multiply to at most 21,
        // under 7 × 7); an equal move goes to the text that contrasts more.
        let lightWins = darkerMove < lighterMove
            || (darkerMove == lighterMove && contrastRatio(lightText, dominant) >= contrastRatio(darkText, dominant))
        let background = lightWins ? darker.colour : lighter.colour
        let text = lightWins ? lightText : darkText
        let secondary = softened(text, on: background)
        return AlbumColours(background: background, text: text, secondaryText: secondary, isFallback: isFallback)
    }

    /// The nearest shade of `colour` (same hue and saturation, lightness
    /// moved towards `end`, 0 or 1) on which `text` reaches `textContrast`;
    /// `colour` itself when it already does.
    private func shade(of colour: RGB, towards end: Double, under text: RGB) -> (colour: RGB, lightness: Double) {
        let (hue, saturation, lightness) = colour.hsl
        if contrastRatio(text, colour) >= Self.textContrast { return (colour, lightness) }
        // Luminance only grows with HSL lightness at a fixed hue and
        // saturation, so the contrast only grows on the way to `end`:
        // bisect for where it reaches the aim, then check the 8-bit colour.
        var near = lightness, far = end
        for _ in 0..<20 {
            let middle = (near + far) / 2
            if contrastRatio(text, RGB(hue: hue, saturation: saturation, lightness: middle)) >= Self.textContrast {
                far = middle
            } else {
                near = middle
            }
        }
        var shade = RGB(hue: hue, saturation: saturation, lightness: far)
        // Rounding to 8 bits can land just short: step on until it does not.
        while contrastRatio(text, shade) < Self.textContrast, far != end {
            far = end == 0 ? max(0, far - 0.002) : min(1, far + 0.002)
            shade = RGB(hue: hue, saturation: saturation, lightness: far)
        }
        return (shade, far)
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
