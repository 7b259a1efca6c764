import Foundation
@testable import Artwork

/// Images made in the test process with the real encoders.
enum TestImages {
    static func grid(width: Int, height: Int, _ colour: (Int, Int) -> RGB) -> PixelGrid {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let c = colour(x, y)
                bytes += [c.red, c.green, c.blue]
            }
        }
        return PixelGrid(width: width, height: height, rgb: bytes)!
    }

    static func solid(_ colour: RGB, side: Int = 40) -> PixelGrid {
        PixelGrid(width: side, height: side, filledWith: colour)
    }

    static func png(_ grid: PixelGrid) -> Data { try! ImageEncoding.png(grid) }
    static func jpeg(_ grid: PixelGrid, quality: Int = 95) -> Data { try! ImageEncoding.jpeg(grid, quality: quality) }

    static let red = RGB(red: 220, green: 30, blue: 40)
}
