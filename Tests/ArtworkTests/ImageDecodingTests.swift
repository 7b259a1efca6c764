import Foundation
import Testing
@testable import Artwork

@Suite("ImageDecoding")
struct ImageDecodingTests {
    let decoding = ImageDecoding()

    @Test func decodesPNGExactly() throws {
        // Left half red, right half blue, small enough not to be resized.
        let grid = TestImages.grid(width: 20, height: 10) { x, _ in x < 10 ? TestImages.red : RGB(red: 0, green: 0, blue: 255) }
        let decoded = try decoding.pixels(from: TestImages.png(grid))
        #expect(decoded == grid)
    }

    @Test func decodesJPEGClosely() throws {
        let grid = TestImages.solid(RGB(red: 40, green: 160, blue: 90), side: 32)
        let data = TestImages.jpeg(grid)
        #expect(ImageFormat(sniffing: data) == .jpeg)
        let decoded = try decoding.pixels(from: data)
        #expect(decoded.width == 32 && decoded.height == 32)
        let centre = decoded[16, 16]
        #expect(abs(Int(centre.red) - 40) < 6 && abs(Int(centre.green) - 160) < 6 && abs(Int(centre.blue) - 90) < 6)
    }

    @Test func largeImagesComeOutSmallWithAspectKept() throws {
        let grid = TestImages.grid(width: 600, height: 300) { x, y in RGB(red: UInt8(x % 256), green: UInt8(y % 256), blue: 0) }
        for data in [TestImages.png(grid), TestImages.jpeg(grid)] {
            let decoded = try decoding.pixels(from: data)
            #expect(decoded.width == 64 && decoded.height == 32)
        }
    }

    @Test func sniffsBytesNotExtensions() throws {
        // A PNG is decoded as PNG whatever it is called; there is no name here at all.
        let png = TestImages.png(TestImages.solid(.white))
        #expect(ImageFormat(sniffing: png) == .png)
        #expect(ImageFormat(sniffing: Data("GIF89a....".utf8)) == .gif)
        #expect(ImageFormat(sniffing: Data("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat(sniffing: Data("<!DOCTYPE html>".utf8)) == nil)
        #expect(throws: ImageDecodingError.unsupported(.gif)) { try decoding.pixels(from: Data("GIF89a\u{1}\0\u{1}\0".utf8)) }
    }

    @Test func emptyAndGarbageAreTypedErrors() {
        #expect(throws: ImageDecodingError.empty) { try decoding.pixels(from: Data()) }
        #expect(throws: ImageDecodingError.unrecognisedFormat) { try decoding.pixels(from: Data("<html>404</html>".utf8)) }
        #expect(throws: ImageDecodingError.unrecognisedFormat) { try decoding.pixels(from: Data(repeating: 0, count: 4096)) }
        // Right magic, rubbish after it.
        var rng = SystemRandomNumberGenerator()
        for magic in [[0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]] as [[UInt8]] {
            for _ in 0..<50 {
                let junk = (0..<Int.random(in: 0..<300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                #expect(throws: ImageDecodingError.self) { try decoding.pixels(from: Data(magic + junk)) }
            }
        }
    }

    @Test(arguments: [ImageFormat.jpeg, .png])
    func truncatedFilesAreTypedErrors(format: ImageFormat) {
        let grid = TestImages.grid(width: 80, height: 80) { x, y in RGB(red: UInt8(x * 3), green: UInt8(y * 3), blue: UInt8((x * y) % 256)) }
        let whole = format == .png ? TestImages.png(grid) : TestImages.jpeg(grid)
        // A PNG cut only inside its 12-byte IEND trailer still holds the whole
        // image (libpng decodes it), so the last cut reaches into the data.
        for cut in [1, 3, 8, 20, 100, whole.count / 2, whole.count - 16] where cut < whole.count {
            #expect(throws: ImageDecodingError.self, "cut at \(cut)") { try decoding.pixels(from: whole.prefix(cut)) }
        }
    }

    @Test func flippedBytesNeverCrash() {
        let grid = TestImages.grid(width: 48, height: 48) { x, y in RGB(red: UInt8(x * 5), green: UInt8(y * 5), blue: 128) }
        var rng = SystemRandomNumberGenerator()
        for whole in [TestImages.png(grid), TestImages.jpeg(grid)] {
            for _ in 0..<200 {
                var damaged = whole
                for _ in 0..<4 {
                    let i = Int.random(in: 3..<damaged.count, using: &rng)
                    damaged[i] = UInt8.random(in: 0...255, using: &rng)
                }
                // Either a picture or a typed error; reaching the next line is the test.
                _ = try? decoding.pixels(from: damaged)
            }
        }
    }

    @Test func hugeDeclaredDimensionsAreRefusedUnread() throws {
        // PNG: rewrite the IHDR size of a real file to 60000 × 60000 and fix the CRC.
        var png = [UInt8](TestImages.png(TestImages.solid(.black, side: 4)))
        for offset in [16, 20] { png.replaceSubrange(offset..<offset + 4, with: [0x00, 0x00, 0xEA, 0x60]) }
        let crc = crc32(png[12..<29])
        png.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
        #expect(throws: ImageDecodingError.tooLarge) { try decoding.pixels(from: Data(png)) }

        // JPEG: patch the SOF0 frame size to 65000 × 65000.
        var jpeg = [UInt8](TestImages.jpeg(TestImages.solid(.black, side: 8)))
        let sof = try #require(jpeg.indices.first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: [0xFD, 0xE8, 0xFD, 0xE8])
        #expect(throws: ImageDecodingError.tooLarge) { try decoding.pixels(from: Data(jpeg)) }
    }

    private func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
