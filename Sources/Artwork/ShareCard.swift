import Foundation
import VinylogueCore

/// What a share card shows: the picture social sites put beside a link to a
/// chart, every-year or album page (Open Graph / Twitter `summary_large_image`).
///
/// The card is 1200 × 630: on the left a square collage of covers (one, four
/// or nine, whichever fills the square from the covers there are; a record
/// drawn in the house colours when there are none), on the right the text in
/// the house palette, drawn with `BitmapFont`. The value holds only what is
/// drawn, so its `key` names the image: the same value always gives the same
/// pixels, and anything that changes the picture changes the key.
public struct ShareCard: DrawnCard, Hashable {
    public static let width = 1200
    public static let height = 630

    /// Large, on top: the user name, or the album's name.
    public var title: String
    /// In the accent colour under the title: "3 years ago", the artist.
    public var highlight: String
    /// Smaller lines under it: the week's dates (drawn a little larger),
    /// the top album, a play count.
    public var details: [String]
    /// The covers for the collage, best first. Only the first nine are used.
    public var covers: [ArtworkAddress]

    public init(title: String, highlight: String, details: [String], covers: [ArtworkAddress]) {
        self.title = title
        self.highlight = highlight
        self.details = details
        self.covers = Array(covers.prefix(9))
    }

    /// Bump when the drawing changes, so cards on disk are drawn again.
    static let drawingVersion = 1

    /// 32 hex digits naming this card's picture (the file name on disk).
    public var key: String {
        // U+0000 cannot occur in a name, so no two field lists run together.
        let fields = ["v\(Self.drawingVersion)", title, highlight] + details + ["covers"] + covers.map(\.localPath)
        return NameHash(fields.joined(separator: "\u{0}")).hex
    }

    /// The covers the collage shows.
    public var drawnCovers: [ArtworkAddress?] { Array(covers.prefix(collageCount)) }

    /// Covers fill at most the collage's square.
    public static var coverSide: Int { height }

    /// How many covers the collage shows: a full square of 1, 4 or 9.
    public var collageCount: Int {
        switch covers.count {
        case 9...: 9
        case 4...: 4
        case 1...: 1
        default: 0
        }
    }

    /// The house palette (the app's dark theme), so cards look alike
    /// whatever their covers.
    public enum Palette {
        public static let background = RGB(red: 0x14, green: 0x13, blue: 0x12)
        public static let text = RGB(red: 0xEE, green: 0xEB, blue: 0xE4)
        public static let muted = RGB(red: 0xA3, green: 0x9F, blue: 0x96)
        public static let accent = RGB(red: 0xE0, green: 0x77, blue: 0x5F)
        public static let tile = RGB(red: 0x2C, green: 0x2A, blue: 0x27)
        public static let groove = RGB(red: 0x1C, green: 0x1B, blue: 0x19)
    }

    /// Draws the card. `images[i]` is the decoded cover of `covers[i]`, or
    /// nil when it could not be had (a record is drawn in its place).
    public func render(images: [PixelGrid?]) -> PixelGrid {
        var canvas = PixelCanvas(width: Self.width, height: Self.height, background: Palette.background)
        drawCollage(on: &canvas, images: images)
        drawText(on: &canvas)
        return canvas.grid
    }

    private func drawCollage(on canvas: inout PixelCanvas, images: [PixelGrid?]) {
        let side = Self.height
        let count = collageCount
        guard count > 0 else {
            canvas.drawRecord(x: 0, y: 0, side: side)
            return
        }
        let perRow = count == 9 ? 3 : count == 4 ? 2 : 1
        let cell = side / perRow
        // A thin gutter in the background colour between covers.
        let gutter = perRow > 1 ? 3 : 0
        for index in 0..<count {
            let x = (index % perRow) * cell + gutter, y = (index / perRow) * cell + gutter
            let inner = cell - 2 * gutter
            if index < images.count, let image = images[index] {
                canvas.draw(image, x: x, y: y, width: inner, height: inner)
            } else {
                canvas.drawRecord(x: x, y: y, side: inner)
            }
        }
    }

    private func drawText(on canvas: inout PixelCanvas) {
        let left = Self.height + 56, width = Self.width - left - 56
        var y = 56
        canvas.draw(text: "VINYLOGUE", x: left, y: y, scale: 3, colour: Palette.accent)
        y += 27 + 44
        struct Block {
            let text: String, colour: RGB, scales: ClosedRange<Int>, lines: Int, gapAfter: Int
        }
        let blocks = [Block(text: title, colour: Palette.text, scales: 4...9, lines: 2, gapAfter: 28),
                      Block(text: highlight, colour: Palette.accent, scales: 3...6, lines: 2, gapAfter: 36)]
            + details.enumerated().map { index, text in
                // The first detail (the week's dates) reads as part of the heading.
                index == 0 ? Block(text: text, colour: Palette.text, scales: 3...4, lines: 2, gapAfter: 22)
                    : Block(text: text, colour: Palette.muted, scales: 3...3, lines: 3, gapAfter: 14)
            }
        for block in blocks where !block.text.isEmpty {
            let fitted = TextFitting(font: .standard).fit(block.text, width: width, scales: block.scales, maxLines: block.lines)
            // Lines sit close: the font's two descender rows are the leading.
            for line in fitted.lines {
                guard y + 7 * fitted.scale <= Self.height - 40 else { return }
                canvas.draw(text: line, x: left, y: y, scale: fitted.scale, colour: block.colour)
                y += BitmapFont.glyphHeight * fitted.scale + fitted.scale
            }
            y += block.gapAfter
        }
    }
}

/// Fits text into a width: the largest scale at which it takes at most a
/// given number of lines, wrapping at spaces; at the smallest scale, what
/// does not fit ends in "…". Its word wrap also serves the SVG widget.
public struct TextFitting: Sendable {
    let font: BitmapFont

    public init(font: BitmapFont) { self.font = font }

    func fit(_ text: String, width: Int, scales: ClosedRange<Int>, maxLines: Int) -> (lines: [String], scale: Int) {
        for scale in scales.reversed() {
            let lines = wrap(text, columns: columns(width: width, scale: scale))
            if lines.count <= maxLines { return (lines, scale) }
        }
        let scale = scales.lowerBound, columns = columns(width: width, scale: scale)
        var lines = Array(wrap(text, columns: columns).prefix(maxLines))
        if var last = lines.popLast() {
            last = String(last.prefix(max(0, columns - 1))) + "…"
            lines.append(last)
        }
        return (lines, scale)
    }

    /// How many characters fit in `width` at `scale`.
    func columns(width: Int, scale: Int) -> Int {
        max(1, (width / max(1, scale) + BitmapFont.advance - BitmapFont.glyphWidth) / BitmapFont.advance)
    }

    /// Greedy word wrap; a word longer than a line is cut.
    public func wrap(_ text: String, columns: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            var word = String(word)
            while word.count > columns {
                if !current.isEmpty { lines.append(current); current = "" }
                lines.append(String(word.prefix(columns)))
                word = String(word.dropFirst(columns))
            }
            if current.isEmpty {
                current = word
            } else if current.count + 1 + word.count <= columns {
                current += " " + word
            } else {
                lines.append(current)
                current = word
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
