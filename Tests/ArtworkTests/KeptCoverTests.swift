import Foundation
import Testing
import VinylogueCore
@testable import Artwork

/// Covers kept for offline use (`ArtworkStore.keep`, behind `vinylogue art
/// fetch`): stored once, outside the size budget, served with the image
/// host gone.
@Suite struct KeptCoverTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kept-covers-\(UUID().uuidString)")
    let base = "http://images.test/i/u/"

    func address(_ n: Int) -> ArtworkAddress {
        ArtworkAddress(size: .extraLarge, hash: String(format: "%032x", n), ext: .png)!
    }

    @Test func keptCoversOutliveTheBudgetAndTheNetwork() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = TestImages.png(TestImages.solid(TestImages.red, side: 64))
        let host = FakeImageHost()
        for n in 0..<6 { host.replies.withLock { $0[address(n).upstreamURL(imageBase: base)!] = (200, png) } }
        // A budget smaller than two images: every new image prunes the rest.
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, maxDiskBytes: Int64(png.count) + 10)
        #expect(try await store.keep(address(0)))
        #expect(try await !store.keep(address(0)), "kept already: nothing fetched")
        #expect(host.count == 1)
        for n in 1..<6 { _ = try await store.image(for: address(n)) }
        #expect(await store.isKept(address(0)))
        let totals = await store.keptTotals()
        #expect(totals.images == 1 && totals.bytes == Int64(png.count))

        // The image host is gone: the kept cover is still served, from disk.
        let offline = ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in throw ArtworkError.unreachable("offline") },
                                   imageBase: base, maxDiskBytes: Int64(png.count) + 10)
        #expect(try await offline.image(for: address(0)).bytes == png)
        await #expect(throws: ArtworkError.self) { try await offline.image(for: address(1)) }
    }

    /// Many covers kept at once into a new directory (as `art fetch`
    /// resuming does): every one is written.
    @Test(arguments: 0..<5)
    func concurrentKeepsIntoANewDirectoryAllSucceed(_ round: Int) async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = TestImages.png(TestImages.solid(TestImages.red, side: 8))
        let store = ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in (200, png) }, imageBase: base)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<16 { group.addTask { try await store.keep(address(100 * round + n)) } }
            for try await stored in group { #expect(stored) }
        }
        #expect(await store.keptTotals().images == 16)
    }

    @Test func aCoverThatCannotBeFetchedIsNotKept() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = ArtworkStore(dataDirectory: directory, upstream: FakeImageHost().upstream, imageBase: base)
        await #expect(throws: ArtworkError.notFound) { try await store.keep(address(9)) }
        #expect(await !store.isKept(address(9)))
        #expect(await store.keptTotals().images == 0)
    }
}
