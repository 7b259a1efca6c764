import Testing
@testable import Artwork
import VinylogueCore
import Synchronization

/// Albums registered to be made when asked (`registerWhenAsked`) are found
/// by the first asker and by every asker at once; the list is made once.
@Suite struct DemoCoverCatalogueTests {
    @Test func albumsRegisteredForLaterAreFoundByEveryAsker() async throws {
        let catalogue = DemoCoverCatalogue()
        let made = Counter()
        let albums = (0..<500).map { (artist: "Artist \($0)", album: "Album \($0)") }
        catalogue.registerWhenAsked { made.add(); return albums }
        #expect(made.value == 0)
        let asked = albums.map { GeneratedCover(artist: $0.artist, album: $0.album).address }
        let found = await withTaskGroup(of: Bool.self) { group in
            for address in asked { group.addTask { catalogue.cover(for: address) != nil } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(found.count == 500 && found.allSatisfy { $0 })
        #expect(made.value == 1)
        #expect(catalogue.cover(for: GeneratedCover(artist: "Nobody", album: "Nothing").address) == nil)
        // A cover registered directly is found as before.
        let direct = catalogue.register(artist: "Someone", album: "Something")
        #expect(catalogue.cover(for: direct)?.album == "Something")
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}
