import Foundation
import NIOPosix
import Synchronization
import Testing
import VinylogueCore
@testable import Artwork

/// A stand-in for Last.fm's image host that counts what it was asked.
final class FakeImageHost: Sendable {
    let replies: Mutex<[String: (status: Int, body: Data)]>
    let requests = Mutex<[String]>([])
    /// Held open so concurrent callers really overlap.
    let delay: Duration

    init(replies: [String: (status: Int, body: Data)] = [:], delay: Duration = .zero) {
        self.replies = Mutex(replies)
        self.delay = delay
    }

    var count: Int { requests.withLock { $0.count } }

    var upstream: ArtworkUpstream {
        ArtworkUpstream { url in
            self.requests.withLock { $0.append(url) }
            if self.delay > .zero { try await Task.sleep(for: self.delay) }
            return self.replies.withLock { $0[url] } ?? (404, Data("<html>Not Found</html>".utf8))
        }
    }
}

/// Counts palette computations.
final class ColourCounter: Sendable {
    let calls = Atomic<Int>(0)
    var reading: ArtworkStore.ColourReading {
        { data in
            self.calls.add(1, ordering: .relaxed)
            return ColourExtraction().colours(fromImage: data)
        }
    }
    var count: Int { calls.load(ordering: .relaxed) }
}

@Suite("ArtworkStore")
struct ArtworkStoreTests {
    let directory: URL
    let base = "http://images.test/i/u/"
    let address = ArtworkAddress(lastFMURL: "https://lastfm.freetls.fastly.net/i/u/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")!
    let redPNG = TestImages.png(TestImages.solid(TestImages.red))

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func url(_ address: ArtworkAddress) -> String { address.upstreamURL(imageBase: base)! }

    func files() -> [String] {
        let root = directory.appendingPathComponent("art")
        let all = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
        return all.filter { !$0.hasSuffix("300x300") && !$0.hasSuffix("demo") }.sorted()
    }

    @Test func aSecondRequestIsServedFromDisk() async throws {
        let host = FakeImageHost(replies: [url(address): (200, redPNG)])
        let counter = ColourCounter()
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, colourReading: counter.reading)

        let first = try await store.image(for: address)
        #expect(first.bytes == redPNG)
        #expect(first.contentType == "image/png")
        #expect(first.colours.background.red > 150)
        let second = try await store.image(for: address)
        #expect(second == first)
        #expect(host.count == 1)
        #expect(counter.count == 1)

        // A fresh store over the same directory (a restart) neither fetches nor recomputes.
        let restarted = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, colourReading: counter.reading)
        #expect(try await restarted.image(for: address) == first)
        #expect(try await restarted.colours(for: address) == first.colours)
        #expect(await restarted.storedColours(for: address) == first.colours)
        #expect(host.count == 1)
        #expect(counter.count == 1)
    }

    /// Art files are read and written only on the file threads the store is
    /// given (NIO's pool for blocking work in the app), never on the calling
    /// task's thread, which belongs to Swift's small cooperative pool: with
    /// those threads stopped, the disk is neither written nor read, and the
    /// art is still served.
    @Test func artFilesAreTouchedOnlyOnTheFileThreads() async throws {
        let host = FakeImageHost(replies: [url(address): (200, redPNG)])
        let stopped = NIOThreadPool(numberOfThreads: 1)  // never started
        let cut = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, fileThreads: stopped)
        #expect(try await cut.image(for: address).bytes == redPNG)
        #expect(files().isEmpty)

        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base)
        let stored = try await store.image(for: address)
        #expect(files().count == 2)
        #expect(await store.storedColours(for: address) == stored.colours)
        #expect(host.count == 2)

        #expect(await cut.storedColours(for: address) == nil)
        #expect(try await cut.image(for: address).bytes == redPNG)
        #expect(host.count == 3, "the stopped store could not read the file, so it fetched again")
    }

    @Test func concurrentIdenticalRequestsFetchOnce() async throws {
        let host = FakeImageHost(replies: [url(address): (200, redPNG)], delay: .milliseconds(200))
        let counter = ColourCounter()
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, colourReading: counter.reading)
        let results = try await withThrowingTaskGroup(of: StoredArtwork.self) { group in
            for _ in 0..<20 { group.addTask { try await store.image(for: address) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 20)
        #expect(Set(results).count == 1)
        #expect(host.count == 1)
        #expect(counter.count == 1)
    }

    @Test func theContentTypeComesFromTheBytes() async throws {
        // Named .png upstream, but the bytes are a JPEG (Last.fm does this).
        let jpeg = TestImages.jpeg(TestImages.solid(TestImages.red))
        let host = FakeImageHost(replies: [url(address): (200, jpeg)])
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base)
        let artwork = try await store.image(for: address)
        #expect(artwork.contentType == "image/jpeg")
    }

    @Test func errorsAreNeverCached() async throws {
        let host = FakeImageHost(replies: [url(address): (200, Data("<!DOCTYPE html><p>Oops</p>".utf8))])
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base)

        await #expect(throws: ArtworkError.notAnImage) { try await store.image(for: address) }
        #expect(files().isEmpty)

        host.replies.withLock { $0[url(address)] = (404, Data("Not Found".utf8)) }
        await #expect(throws: ArtworkError.notFound) { try await store.image(for: address) }
        host.replies.withLock { $0[url(address)] = (503, redPNG) }
        await #expect(throws: ArtworkError.upstreamStatus(503)) { try await store.image(for: address) }
        #expect(files().isEmpty)
        #expect(await store.storedColours(for: address) == nil)

        // Once upstream recovers, the image arrives: nothing bad was remembered.
        host.replies.withLock { $0[url(address)] = (200, redPNG) }
        #expect(try await store.image(for: address).bytes == redPNG)
        #expect(host.count == 4)
        #expect(files() == ["300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png", "300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png.colours.json"])
    }

    @Test func transportFailuresAndOversizeBodiesAreTypedErrors() async throws {
        struct Down: Error {}
        let failing = ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in throw Down() }, imageBase: base)
        await #expect(throws: ArtworkError.self) { try await failing.image(for: address) }

        let host = FakeImageHost(replies: [url(address): (200, redPNG)])
        let small = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, maxBytes: 100)
        await #expect(throws: ArtworkError.tooLarge) { try await small.image(for: address) }
        #expect(files().isEmpty)
    }

    @Test func onlyTheRebuiltURLIsEverFetched() async throws {
        let host = FakeImageHost(replies: [url(address): (200, redPNG)])
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base)
        _ = try await store.image(for: address)
        #expect(host.requests.withLock { $0 } == ["http://images.test/i/u/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png"])
    }

    @Test func coloursForUsesTheSidecarWithoutFetching() async throws {
        let host = FakeImageHost(replies: [url(address): (200, redPNG)])
        let counter = ColourCounter()
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, colourReading: counter.reading)
        #expect(await store.storedColours(for: address) == nil)
        let colours = try await store.colours(for: address)
        #expect(host.count == 1)
        #expect(try await store.colours(for: address) == colours)
        #expect(host.count == 1)
        #expect(counter.count == 1)
    }

    @Test func writesAreAtomic() async throws {
        // A reader hammering the file while it is rewritten must only ever
        // see one whole version or the other, never a torn or empty file.
        let target = directory.appendingPathComponent("art/atomic.bin")
        let a = Data(repeating: 0xAA, count: 2_000_000)
        let b = Data(repeating: 0xBB, count: 1_000_000)
        try ArtworkDiskCache.writeAtomically(a, to: target)
        let writer = Task.detached {
            for i in 0..<40 { try ArtworkDiskCache.writeAtomically(i % 2 == 0 ? b : a, to: target) }
        }
        for _ in 0..<400 {
            let seen = try Data(contentsOf: target)
            #expect(seen == a || seen == b, "torn read of \(seen.count) bytes")
            if seen != a && seen != b { break }
        }
        try await writer.value
        // No temporary files are left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path)
        #expect(leftovers == ["atomic.bin"])
    }

    @Test func demoCoversAreServedWithoutNetwork() async throws {
        let host = FakeImageHost()
        let catalogue = DemoCoverCatalogue()
        let counter = ColourCounter()
        let store = ArtworkStore(dataDirectory: directory, upstream: host.upstream, imageBase: base, demoCovers: catalogue, colourReading: counter.reading)
        let demo = catalogue.register(artist: "The Velvet Lanterns", album: "Quiet Harbor")
        #expect(demo.localPath.hasPrefix("/art/demo/"))
        let artwork = try await store.image(for: demo)
        #expect(artwork.contentType == "image/png")
        #expect(artwork.bytes == (try GeneratedCover(artist: "The Velvet Lanterns", album: "Quiet Harbor").pngData()))
        #expect(!artwork.colours.isFallback)
        #expect(host.count == 0)
        _ = try await store.image(for: demo)
        #expect(counter.count == 1)

        let unknown = ArtworkAddress(size: .demo, hash: String(repeating: "0", count: 32), ext: .png)!
        await #expect(throws: ArtworkError.notFound) { try await store.image(for: unknown) }
        #expect(host.count == 0)
    }

    /// The art directory stays under its limit: the covers shown least
    /// recently go first (with their palettes), and come back on demand.
    @Test func theDiskCacheKeepsToItsLimitEvictingTheLeastRecentlyShown() async throws {
        let addresses = (1...5).map { i in
            ArtworkAddress(lastFMURL: "https://lastfm.freetls.fastly.net/i/u/300x300/\(String(repeating: String(i), count: 32)).png")!
        }
        let image = TestImages.png(TestImages.solid(TestImages.red))
        let host = FakeImageHost(replies: Dictionary(uniqueKeysWithValues: addresses.map { (url($0), (200, image)) }))
        // What one cover costs on disk: its bytes and its palette.
        let probe = directory.appendingPathComponent("probe")
        _ = try await ArtworkStore(dataDirectory: probe, upstream: host.upstream, imageBase: base, maxDiskBytes: nil).image(for: addresses[0])
        let perCover = ArtworkDiskBudget.files(under: probe.appendingPathComponent("art")).reduce(0) { $0 + $1.size }
        #expect(perCover > Int64(image.count))

        let limit = perCover * 9 / 2  // room for four and a half covers
        let limited = directory.appendingPathComponent("limited")
        // A clock a second further on at each reading: every use is dated
        // apart from the last without sleeping past the file system's tick.
        let ticks = Mutex(1_700_000_000.0)
        let clock = WallClock { Date(timeIntervalSince1970: ticks.withLock { $0 += 1; return $0 }) }
        let store = ArtworkStore(dataDirectory: limited, upstream: host.upstream, imageBase: base, maxDiskBytes: limit, clock: clock)
        func onDisk() -> Set<String> {
            Set(ArtworkDiskBudget.files(under: limited.appendingPathComponent("art")).map { $0.url.lastPathComponent })
        }
        for address in addresses.prefix(4) {
            _ = try await store.image(for: address)
        }
        #expect(onDisk().count == 8)
        // Cover 1 is shown again, so cover 2 is now the one shown least recently.
        let fetched = host.count
        _ = try await store.image(for: addresses[0])
        #expect(host.count == fetched)
        _ = try await store.image(for: addresses[4])

        let kept = onDisk()
        let total = ArtworkDiskBudget.files(under: limited.appendingPathComponent("art")).reduce(0) { $0 + $1.size }
        #expect(total <= limit)
        #expect(kept.count < 10)
        for i in [0, 3, 4] {
            #expect(kept.contains(addresses[i].fileName) && kept.contains(addresses[i].fileName + ".colours.json"), "cover \(i + 1) kept")
        }
        for i in [1] {
            #expect(!kept.contains(addresses[i].fileName) && !kept.contains(addresses[i].fileName + ".colours.json"), "cover \(i + 1) evicted")
        }
        // An evicted cover is fetched again when asked for.
        let before = host.count
        let again = try await store.image(for: addresses[1])
        #expect(again.bytes == image)
        #expect(host.count == before + 1)
    }
}
