import Artwork
import Foundation
import PostgresNIO
import PostgresStore
import Synchronization
import Testing

/// Two instances on one PostgreSQL database: the palette of a cover is
/// computed by the first that loads it and found by the other without
/// fetching or decoding anything.
@Suite struct PaletteSharingTests {
    final class Counter: Sendable {
        let decoded = Atomic<Int>(0)
        let fetched = Atomic<Int>(0)
        var reading: ArtworkStore.ColourReading {
            { data in
                self.decoded.add(1, ordering: .relaxed)
                return ColourExtraction().colours(fromImage: data)
            }
        }
        var upstream: ArtworkUpstream {
            ArtworkUpstream { _ in
                self.fetched.add(1, ordering: .relaxed)
                return (404, Data())
            }
        }
    }

    @Test func aPaletteComputedByOneInstanceIsFoundByTheOthers() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                try await database.migrate()
                let palettes = PostgresPaletteStore(database)
                let covers = DemoCoverCatalogue()
                let cover = GeneratedCover(artist: "Portishead", album: "Dummy")
                covers.register(artist: cover.artist, album: cover.album)
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("palettes-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: root) }
                func instance(_ name: String, _ counter: Counter) -> ArtworkStore {
                    ArtworkStore(dataDirectory: root.appendingPathComponent(name), upstream: counter.upstream, demoCovers: covers,
                                 palettes: palettes, colourReading: counter.reading)
                }
                let first = Counter(), second = Counter()
                let one = instance("one", first), two = instance("two", second)
                #expect(await two.storedColours(for: cover.address) == nil, "nothing is known yet")

                let computed = try await one.colours(for: cover.address)
                #expect(first.decoded.load(ordering: .relaxed) == 1)
                #expect(await palettes.palette(for: cover.address) == computed)

                #expect(await two.storedColours(for: cover.address) == computed)
                #expect(try await two.colours(for: cover.address) == computed)
                // Serving the image itself does not compute it again either.
                #expect(try await two.image(for: cover.address).colours == computed)
                #expect(second.decoded.load(ordering: .relaxed) == 0)
                #expect(first.fetched.load(ordering: .relaxed) + second.fetched.load(ordering: .relaxed) == 0)
            }
        }
    }
}

/// How Vinylogue's connections to PostgreSQL are set up.
@Suite struct PostgresConnectionTests {
    /// The JIT compiled the every-year chart query on each call (its plan
    /// covers 14 weeks): 266 ms where the query itself takes 20 ms.
    @Test func connectionsRunWithoutTheJIT() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresDatabase.with(url: url) { database in
                let rows = try await database.client.query("SHOW jit")
                var setting: String?
                for try await value in rows.decode(String.self) { setting = value }
                #expect(setting == "off")
            }
        }
    }
}
