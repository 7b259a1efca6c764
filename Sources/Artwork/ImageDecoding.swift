import CImageCodecs
import Foundation

/// Why bytes could not be turned into pixels.
public enum ImageDecodingError: Error, Sendable, Hashable {
    /// No bytes at all.
    case empty
    /// Not JPEG or PNG by their magic numbers.
    case unrecognisedFormat
    /// A format we recognise but do not decode (GIF, WebP, CMYK variants...).
    case unsupported(ImageFormat)
    /// Declared dimensions beyond the pixel budget; refused before allocating.
    case tooLarge
    /// Truncated or damaged data.
    case corrupt(ImageFormat)
    case outOfMemory
}

/// Decodes JPEG and PNG bytes with the system libjpeg / libpng into a small
/// `PixelGrid` for colour work. The format comes from sniffing, never from
/// a file extension, and any bad input ends as a typed error.
public struct ImageDecoding: Sendable {
    /// Neither side of the result exceeds this.
    public let maxSide: Int
    /// Images whose declared width × height is larger are refused unread:
    /// a 20-byte header can claim 65535 × 65535.
    public let maxDecodedPixels: UInt64

    public init(maxSide: Int = 64, maxDecodedPixels: UInt64 = 25_000_000) {
        self.maxSide = max(1, maxSide)
        self.maxDecodedPixels = maxDecodedPixels
    }

    /// Decodes and downsamples `bytes` (box filter, aspect ratio kept).
    /// Transparent PNG areas are composited over white.
    public func pixels(from bytes: Data) throws(ImageDecodingError) -> PixelGrid {
        guard !bytes.isEmpty else { throw .empty }
        guard let format = ImageFormat(sniffing: bytes) else { throw .unrecognisedFormat }
        var image = cic_image()
        let status: Int32 = bytes.withUnsafeBytes { raw in
            let base = raw.bindMemory(to: UInt8.self).baseAddress
            switch format {
            case .jpeg:
                // DCT scaling to at least maxSide keeps big JPEGs fast and small.
                return cic_decode_jpeg(base, raw.count, UInt32(maxSide), maxDecodedPixels, &image)
            case .png:
                return cic_decode_png(base, raw.count, maxDecodedPixels, &image)
            case .gif, .webp:
                return -1
            }
        }
        defer { cic_free(image.pixels) }
        switch status {
        case Int32(CIC_OK.rawValue): break
        case -1: throw .unsupported(format)
        case Int32(CIC_ERR_TOO_LARGE.rawValue): throw .tooLarge
        case Int32(CIC_ERR_MEMORY.rawValue): throw .outOfMemory
        case Int32(CIC_ERR_UNSUPPORTED.rawValue): throw .unsupported(format)
        default: throw .corrupt(format)
        }
        guard let pixels = image.pixels, image.width > 0, image.height > 0 else { throw .corrupt(format) }
        return Self.downsample(
            pixels, width: Int(image.width), height: Int(image.height),
            channels: Int(image.channels), maxSide: maxSide
        )
    }

    /// Averages source pixels into at most maxSide × maxSide cells.
    static func downsample(_ source: UnsafePointer<UInt8>, width: Int, height: Int, channels: Int, maxSide: Int) -> PixelGrid {
        let scale = max(Double(width) / Double(maxSide), Double(height) / Double(maxSide), 1)
        let outWidth = max(1, Int((Double(width) / scale).rounded()))
        let outHeight = max(1, Int((Double(height) / scale).rounded()))
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * 3)
        for oy in 0..<outHeight {
            let y0 = oy * height / outHeight
            let y1 = max(y0 + 1, (oy + 1) * height / outHeight)
            for ox in 0..<outWidth {
                let x0 = ox * width / outWidth
                let x1 = max(x0 + 1, (ox + 1) * width / outWidth)
                var sum = (0, 0, 0)
                for y in y0..<y1 {
                    var i = (y * width + x0) * channels
                    for _ in x0..<x1 {
                        var r = Int(source[i]), g = Int(source[i + 1]), b = Int(source[i + 2])
                        if channels == 4 {
                            // Composite straight alpha over white.
                            let a = Int(source[i + 3])
                            r = (r * a + 255 * (255 - a)) / 255
                            g = (g * a + 255 * (255 - a)) / 255
                            b = (b * a + 255 * (255 - a)) / 255
                        }
                        sum.0 += r; sum.1 += g; sum.2 += b
                        i += channels
                    }
                }
                let n = (y1 - y0) * (x1 - x0)
                let o = (oy * outWidth + ox) * 3
                out[o] = UInt8((sum.0 + n / 2) / n)
                out[o + 1] = UInt8((sum.1 + n / 2) / n)
                out[o + 2] = UInt8((sum.2 + n / 2) / n)
            }
        }
        return PixelGrid(width: outWidth, height: outHeight, rgb: out)!
    }
}
