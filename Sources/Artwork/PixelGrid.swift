/// A small opaque RGB image: what colour work looks at. Row-major, three
/// bytes per pixel.
public struct PixelGrid: Sendable, Hashable {
    public let width: Int
    public let height: Int
    public let rgb: [UInt8]

    /// nil unless `rgb` holds exactly `width * height * 3` bytes.
    public init?(width: Int, height: Int, rgb: [UInt8]) {
        guard width > 0, height > 0, rgb.count == width * height * 3 else { return nil }
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// A grid of one colour.
    public init(width: Int, height: Int, filledWith colour: RGB) {
        self.width = max(1, width)
        self.height = max(1, height)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(self.width * self.height * 3)
        for _ in 0..<(self.width * self.height) { bytes += [colour.red, colour.green, colour.blue] }
        rgb = bytes
    }

    /// The pixel at (x, y).
    public subscript(x: Int, y: Int) -> RGB {
        let i = (y * width + x) * 3
        return RGB(red: rgb[i], green: rgb[i + 1], blue: rgb[i + 2])
    }

    /// Every pixel, row by row.
    public var pixels: [RGB] {
        stride(from: 0, to: rgb.count, by: 3).map { RGB(red: rgb[$0], green: rgb[$0 + 1], blue: rgb[$0 + 2]) }
    }
}
