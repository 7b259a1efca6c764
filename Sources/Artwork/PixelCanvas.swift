/// A mutable RGB image to draw into: rectangles, scaled images and
/// `BitmapFont` text. `grid` hands the result over as a `PixelGrid`.
///
/// Everything is clipped to the canvas, so no drawing call can write out of
/// bounds whatever its coordinates.
public struct PixelCanvas: Sendable {
    public let width: Int
    public let height: Int
    private var rgb: [UInt8]

    public init(width: Int, height: Int, background: RGB) {
        self.width = max(1, width)
        self.height = max(1, height)
        rgb = [UInt8](repeating: 0, count: self.width * self.height * 3)
        fill(x: 0, y: 0, width: self.width, height: self.height, with: background)
    }

    /// The pixels drawn so far.
    public var grid: PixelGrid { PixelGrid(width: width, height: height, rgb: rgb)! }

    /// The pixel at (x, y).
    public subscript(x: Int, y: Int) -> RGB {
        let i = (y * width + x) * 3
        return RGB(red: rgb[i], green: rgb[i + 1], blue: rgb[i + 2])
    }

    /// Fills the rectangle at (x, y), `w` × `h` pixels.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, with colour: RGB) {
        let x0 = max(0, x), x1 = min(width, x + w), y0 = max(0, y), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        let width = self.width
        rgb.withUnsafeMutableBufferPointer { bytes in
            for row in y0..<y1 {
                var i = (row * width + x0) * 3
                for _ in x0..<x1 {
                    bytes[i] = colour.red; bytes[i + 1] = colour.green; bytes[i + 2] = colour.blue
                    i += 3
                }
            }
        }
    }

    /// Fills the disc of radius `r` centred on (cx, cy).
    public mutating func fillDisc(cx: Int, cy: Int, r: Int, with colour: RGB) {
        guard r > 0 else { return }
        for dy in -r...r {
            let half = Int((Double(r * r - dy * dy)).squareRoot())
            fill(x: cx - half, y: cy + dy, width: 2 * half + 1, height: 1, with: colour)
        }
    }

    /// Draws `image` scaled to fill the `w` × `h` rectangle at (x, y),
    /// cropping the longer side to keep its proportions (like CSS
    /// `object-fit: cover`). Each target pixel averages the source pixels
    /// under it, so shrinking stays smooth; growing repeats pixels.
    public mutating func draw(_ image: PixelGrid, x: Int, y: Int, width w: Int, height h: Int) {
        guard w > 0, h > 0 else { return }
        // The source rectangle with the target's aspect ratio, centred.
        let targetAspect = Double(w) / Double(h), sourceAspect = Double(image.width) / Double(image.height)
        var sw = Double(image.width), sh = Double(image.height)
        if sourceAspect > targetAspect { sw = sh * targetAspect } else { sh = sw / targetAspect }
        let sx = (Double(image.width) - sw) / 2, sy = (Double(image.height) - sh) / 2
        // The source span under each target column and row, worked out once.
        func spans(_ count: Int, from origin: Double, over length: Double, limit: Int) -> [(Int, Int)] {
            (0..<count).map { t in
                let a = origin + Double(t) * length / Double(count), b = origin + Double(t + 1) * length / Double(count)
                let lower = min(limit - 1, Int(a))
                return (lower, max(lower + 1, min(limit, Int(b.rounded(.up)))))
            }
        }
        let columns = spans(w, from: sx, over: sw, limit: image.width)
        let rows = spans(h, from: sy, over: sh, limit: image.height)
        let width = self.width, sourceWidth = image.width
        let xs = max(0, x)..<min(width, x + w), ys = max(0, y)..<min(height, y + h)
        guard !xs.isEmpty, !ys.isEmpty else { return }
        image.rgb.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { target in
                for ty in ys {
                    let (r0, r1) = rows[ty - y]
                    for tx in xs {
                        let (c0, c1) = columns[tx - x]
                        var red = 0, green = 0, blue = 0
                        for row in r0..<r1 {
                            var i = (row * sourceWidth + c0) * 3
                            for _ in c0..<c1 {
                                red += Int(source[i]); green += Int(source[i + 1]); blue += Int(source[i + 2])
                                i += 3
                            }
                        }
                        let n = (r1 - r0) * (c1 - c0)
                        let o = (ty * width + tx) * 3
                        target[o] = UInt8(red / n); target[o + 1] = UInt8(green / n); target[o + 2] = UInt8(blue / n)
                    }
                }
            }
        }
    }

    /// Draws `text` with its top-left corner at (x, y), each font pixel
    /// `scale` × `scale` image pixels. Returns the width drawn.
    @discardableResult
    public mutating func draw(text: String, x: Int, y: Int, scale: Int, colour: RGB, font: BitmapFont = .standard) -> Int {
        let scale = max(1, scale)
        var penX = x
        for character in text {
            let glyph = font.glyph(for: character)
            for gy in 0..<BitmapFont.glyphHeight {
                for gx in 0..<BitmapFont.glyphWidth where glyph.isLit(x: gx, y: gy) {
                    fill(x: penX + gx * scale, y: y + gy * scale, width: scale, height: scale, with: colour)
                }
            }
            penX += BitmapFont.advance * scale
        }
        return font.width(of: text, scale: scale)
    }
}
