import Artwork
import Foundation
import VinylogueCore
import HTTPServing

/// The SVG form of a person's widget (`/u/{user}/widget.svg`): the PNG's
/// layout (`WidgetCard`) in real type, 300 × 400.
///
/// Safe to show anywhere: every text is XML-escaped (`XMLText`), the covers
/// are embedded as `data:` URIs of small JPEGs made from the server's own
/// art store (an `<img>` of an SVG loads nothing else, and this one names
/// nothing else), there is no script, no style sheet and no event
/// attribute, and the one link goes to the chart page on this server.
enum WidgetSVG {
    static let width = WidgetCard.width, height = WidgetCard.height
    static let margin = 14, cover = 52, rowPitch = 58, rowsTop = 90
    /// The side of the embedded covers: twice the drawn size, for sharp
    /// screens.
    static let thumbnailSide = 2 * cover
    static let font = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"

    /// The document; `covers[i]` are the JPEG or PNG bytes of row i's cover.
    static func document(_ content: WidgetContent, covers: [Data?]) -> String {
        typealias Palette = ShareCard.Palette
        let textLeft = margin + cover + 10, textWidth = width - textLeft - margin
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="\(font)" role="img" aria-labelledby="widget-title">
            <title id="widget-title">\(XMLText.escaped("\(content.user.value): \(content.highlight), \(content.week)"))</title>
            <defs><clipPath id="names"><rect x="\(textLeft)" y="0" width="\(textWidth)" height="\(height)"/></clipPath></defs>
            <rect width="\(width)" height="\(height)" fill="\(Palette.background.hex)"/>
            <a href="\(XMLText.escaped(content.chartURL))" target="_blank" rel="noopener">

            """
        svg += text(content.user.value, x: margin, y: 36, size: 22, colour: Palette.text, weight: "700", limit: 22)
        svg += text(content.highlight, x: margin, y: 58, size: 15, colour: Palette.accent, weight: "600", limit: 32)
        svg += text(content.week, x: margin, y: 78, size: 12, colour: Palette.muted, limit: 44)
        if content.rows.isEmpty {
            svg += record(x: (width - 120) / 2, y: rowsTop + 8, side: 120)
            for (index, line) in TextFitting(font: .standard).wrap(content.note, columns: 38).prefix(5).enumerated() {
                svg += text(line, x: margin, y: rowsTop + 160 + index * 18, size: 13, colour: Palette.text, limit: 40)
            }
        }
        svg += "<g clip-path=\"url(#names)\">\n"
        for (index, row) in content.rows.enumerated() {
            let top = rowsTop + index * rowPitch
            var lines = [(row.name, 14, Palette.text, "600", 26)]
            if let artist = row.artist { lines.append((artist, 12, Palette.muted, "400", 32)) }
            lines.append((row.plays, 12, Palette.accent, "400", 32))
            for (n, line) in lines.enumerated() {
                svg += text(line.0, x: textLeft, y: top + 17 + n * 16, size: line.1, colour: line.2, weight: line.3, limit: line.4)
            }
        }
        svg += "</g>\n"
        for index in content.rows.indices {
            let top = rowsTop + index * rowPitch
            if index < covers.count, let bytes = covers[index], let uri = dataURI(bytes) {
                svg += "<image x=\"\(margin)\" y=\"\(top)\" width=\"\(cover)\" height=\"\(cover)\" preserveAspectRatio=\"xMidYMid slice\" href=\"\(uri)\"/>\n"
            } else {
                svg += record(x: margin, y: top, side: cover)
            }
        }
        svg += text("vinylogue", x: width - margin, y: height - margin + 2, size: 10, colour: Palette.muted, anchor: "end", limit: 20)
        svg += "</a>\n</svg>\n"
        return svg
    }

    /// One line of text, cut to `limit` characters with "…" (the clip path
    /// stops what still runs long).
    static func text(_ value: String, x: Int, y: Int, size: Int, colour: RGB, weight: String = "400", anchor: String? = nil,
                     limit: Int) -> String {
        let shown = value.count > limit ? value.prefix(limit - 1) + "…" : value[...]
        return "<text x=\"\(x)\" y=\"\(y)\" font-size=\"\(size)\" font-weight=\"\(weight)\" fill=\"\(colour.hex)\""
            + (anchor.map { " text-anchor=\"\($0)\"" } ?? "") + ">\(XMLText.escaped(String(shown)))</text>\n"
    }

    /// The record that stands in for a missing cover, as the PNG draws it.
    static func record(x: Int, y: Int, side: Int) -> String {
        typealias Palette = ShareCard.Palette
        let c = Double(side) / 2, r = Double(side) * 0.4
        return "<g transform=\"translate(\(x) \(y))\"><rect width=\"\(side)\" height=\"\(side)\" fill=\"\(Palette.tile.hex)\"/>"
            + "<circle cx=\"\(c)\" cy=\"\(c)\" r=\"\(r)\" fill=\"\(Palette.background.hex)\"/>"
            + "<circle cx=\"\(c)\" cy=\"\(c)\" r=\"\(r * 0.7)\" fill=\"none\" stroke=\"\(Palette.groove.hex)\" stroke-width=\"\(max(1, r / 12))\"/>"
            + "<circle cx=\"\(c)\" cy=\"\(c)\" r=\"\(r * 0.3)\" fill=\"\(Palette.accent.hex)\"/></g>\n"
    }

    /// `bytes` as a `data:` URI, when they are a JPEG or a PNG (nothing
    /// else is embedded).
    static func dataURI(_ bytes: Data) -> String? {
        guard let format = ImageFormat(sniffing: bytes), format == .jpeg || format == .png else { return nil }
        return "data:\(format.contentType);base64,\(bytes.base64EncodedString())"
    }
}
