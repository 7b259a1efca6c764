import Foundation
import Testing
import VinylogueCore
@testable import Artwork

@Suite("GeneratedCover")
struct GeneratedCoverTests {
    @Test func sameNamesGiveTheSameBytes() throws {
        let a = try GeneratedCover(artist: "Maya Vale", album: "Orchard of the Sea").pngData()
        let b = try GeneratedCover(artist: "Maya Vale", album: "Orchard of the Sea").pngData()
        #expect(a == b)
        #expect(ImageFormat(sniffing: a) == .png)
        let grid = try ImageDecoding(maxSide: 300).pixels(from: a)
        #expect(grid.width == 300 && grid.height == 300)
    }

    @Test func caseAndSpacesDoNotMakeADifferentAlbum() {
        #expect(GeneratedCover(artist: " maya vale", album: "ORCHARD OF THE SEA").address
            == GeneratedCover(artist: "Maya Vale", album: "Orchard of the Sea").address)
    }

    @Test func differentNamesGiveDifferentCoversAndAddresses() throws {
        let names = [("Maya Vale", "Orchard of the Sea"), ("Maya Vale", "Orchard of the Sun"), ("Echo Engine", "Paper Comet"),
                     ("ab", "c"), ("a", "bc"), ("The Neon Foxes", "Slow Season"), ("Felix Hart", "Comets")]
        let covers = names.map { GeneratedCover(artist: $0.0, album: $0.1) }
        #expect(Set(covers.map(\.address)).count == names.count)
        #expect(Set(try covers.map { try $0.pngData() }).count == names.count)
    }

    @Test func addressesAreStableAcrossRuns() {
        // Pinned: a change here breaks every demo URL already handed out.
        #expect(NameHash("").hex == "6c62272e07bb014262b821756295c58d")
        #expect(NameHash("a").hex == "d228cb696f1a8caf78912b704e4a8964")
        let address = GeneratedCover(artist: "Maya Vale", album: "Orchard of the Sea").address
        #expect(address.size == .demo && address.ext == .png)
        #expect(ArtworkAddress(localPath: address.localPath) == address)
    }

    @Test func coversUseSeveralDesignsAndReadableColours() throws {
        var backgrounds = Set<RGB>()
        for i in 0..<24 {
            let cover = GeneratedCover(artist: "Artist \(i)", album: "Album \(i)")
            // The design is resolution-independent; a small render keeps the debug build quick.
            let colours = ColourExtraction().colours(fromImage: try cover.pngData(side: 96))
            #expect(!colours.isFallback)
            #expect(contrastRatio(colours.text, colours.background) >= 4.5)
            backgrounds.insert(colours.background)
            // More than one colour on every cover: it is a design, not a swatch.
            let grid = cover.render(side: 96)
            #expect(Set(grid.pixels).count > 2)
        }
        #expect(backgrounds.count > 12)
    }
}
