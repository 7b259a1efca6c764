import CImageCodecs
import Foundation

/// Encodes a `PixelGrid` with the system libpng / libjpeg. PNG is what
/// generated covers are served as; JPEG exists so tests can make real JPEGs.
public enum ImageEncoding {
    /// Lossless, and byte-for-byte the same for the same pixels.
    public static func png(_ grid: PixelGrid) throws(ArtworkError) -> Data {
        try encode(grid) { base, out, length in
            cic_encode_png_rgb(base, UInt32(grid.width), UInt32(grid.height), out, length)
        }
    }

    /// Baseline JPEG at `quality` (1...100).
    public static func jpeg(_ grid: PixelGrid, quality: Int = 90) throws(ArtworkError) -> Data {
        try encode(grid) { base, out, length in
            cic_encode_jpeg_rgb(base, UInt32(grid.width), UInt32(grid.height), Int32(quality), out, length)
        }
    }

    private static func encode(
        _ grid: PixelGrid,
        _ call: (UnsafePointer<UInt8>?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Int32
    ) throws(ArtworkError) -> Data {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = grid.rgb.withUnsafeBufferPointer { call($0.baseAddress, &out, &length) }
        defer { cic_free(out) }
        guard status == Int32(CIC_OK.rawValue), let out else { throw .encodingFailed }
        return Data(bytes: out, count: length)
    }
}
