import Foundation
import VinylogueCore

/// "This week, N years ago" for a sidebar: the PNG form of a person's
/// widget (`/u/{user}/widget.png`), 300 × 400, in the share cards' house
/// palette and pixel font.
///
/// On top the person's name, "This week, N years ago" in the accent colour
/// and the week; below, up to five rows of a small cover (a record when
/// there is none), the album, its artist and its plays. With no rows, the
/// sentence saying why (nothing played, no chart that year, the person
/// unknown) stands where they would be.
public struct WidgetCard: DrawnCard, Hashable {
    public static let width = 300
    public static let height = 400
    /// The most rows a widget shows.
    public static let maxRows = 5

    /// One album (or artist, or track) of the week.
    public struct Row: Sendable, Hashable {
        public var name: String
        /// The muted line under the name; empty for an artist row.
        public var artist: String
        /// "12 plays".
        public var plays: String

        public init(name: String, artist: String, plays: String) {
            self.name = name
            self.artist = artist
            self.plays = plays
        }
    }

    /// The person's name.
    public var title: String
    /// "This week, 3 years ago".
    public var highlight: String
    /// The week's label.
    public var week: String
    /// At most `maxRows`.
    public var rows: [Row]
    /// Why there are no rows (shown only when there are none).
    public var note: String
    /// One place per row: its cover, or nil for a record.
    public var covers: [ArtworkAddress?]

    public init(title: String, highlight: String, week: String, rows: [Row], note: String, covers: [ArtworkAddress?]) {
        self.title = title
        self.highlight = highlight
        self.week = week
        self.rows = Array(rows.prefix(Self.maxRows))
        self.note = note
        self.covers = (0..<self.rows.count).map { $0 < covers.count ? covers[$0] : nil }
    }

    /// Bump when the drawing changes, so widgets on disk are drawn again.
    static let drawingVersion = 1

    public var key: String {
        // U+0000 cannot occur in a name, so no two field lists run together.
        var fields = ["widget", "v\(Self.drawingVersion)", title, highlight, week, note]
        for (row, cover) in zip(rows, covers) { fields += [row.name, row.artist, row.plays, cover?.localPath ?? "-"] }
        return NameHash(fields.joined(separator: "\u{0}")).hex
    }

    public var drawnCovers: [ArtworkAddress?] { covers }

    /// The side of a row's cover.
    static let coverSize = 52
    public static var coverSide: Int { coverSize }

    static let margin = 14
    /// From one row's top to the next's.
    static let rowPitch = 58

    public func render(images: [PixelGrid?]) -> PixelGrid {
        typealias Palette = ShareCard.Palette
        var canvas = PixelCanvas(width: Self.width, height: Self.height, background: Palette.background)
        let fitting = TextFitting(font: .standard), left = Self.margin, width = Self.width - 2 * Self.margin
        var y = Self.margin
        /// Draws `text` fitted to `width` at the largest of `scales` and
        /// returns the height it took.
        func line(_ text: String, x: Int, y: Int, width: Int, scales: ClosedRange<Int>, lines: Int = 1, colour: RGB) -> Int {
            let fitted = fitting.fit(text, width: width, scales: scales, maxLines: lines)
            var top = y
            for line in fitted.lines {
                canvas.draw(text: line, x: x, y: top, scale: fitted.scale, colour: colour)
                top += BitmapFont.glyphHeight * fitted.scale + fitted.scale
            }
            return top - y
        }
        y += line(title, x: left, y: y, width: width, scales: 2...3, colour: Palette.text) + 2
        y += line(highlight, x: left, y: y, width: width, scales: 2...2, colour: Palette.accent) + 2
        y += line(week, x: left, y: y, width: width, scales: 1...1, colour: Palette.muted) + 12

        if rows.isEmpty {
            let side = 120
            canvas.drawRecord(x: (Self.width - side) / 2, y: y + 8, side: side)
            _ = line(note, x: left, y: y + side + 24, width: width, scales: 1...2, lines: 5, colour: Palette.text)
        }
        let textLeft = left + Self.coverSize + 10, textWidth = Self.width - textLeft - Self.margin
        // One size for every row's name: the larger when all fit on a line.
        let large = fitting.columns(width: textWidth, scale: 2)
        let nameScale = rows.allSatisfy { fitting.wrap($0.name, columns: large).count <= 1 } ? 2 : 1
        for (index, row) in rows.enumerated() {
            let top = y + index * Self.rowPitch
            if index < images.count, let image = images[index] {
                canvas.draw(image, x: left, y: top, width: Self.coverSize, height: Self.coverSize)
            } else {
                canvas.drawRecord(x: left, y: top, side: Self.coverSize)
            }
            // The lines centred beside the cover (each glyph row is 10 × scale).
            let height = 10 * nameScale + 1 + (row.artist.isEmpty ? 0 : 11) + 10
            var textTop = top + max(0, (Self.coverSize - height) / 2) + 1
            textTop += line(row.name, x: textLeft, y: textTop, width: textWidth, scales: nameScale...nameScale, colour: Palette.text) + 1
            if !row.artist.isEmpty {
                textTop += line(row.artist, x: textLeft, y: textTop, width: textWidth, scales: 1...1, colour: Palette.muted) + 1
            }
            _ = line(row.plays, x: textLeft, y: textTop, width: textWidth, scales: 1...1, colour: Palette.accent)
        }
        let mark = "vinylogue"
        canvas.draw(text: mark, x: Self.width - Self.margin - BitmapFont.standard.width(of: mark, scale: 1),
                    y: Self.height - Self.margin + 2 - BitmapFont.glyphHeight, scale: 1, colour: Palette.muted)
        return canvas.grid
    }
}
