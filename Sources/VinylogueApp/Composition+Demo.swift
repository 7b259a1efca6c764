import Artwork
import Stores
import Sync
import VinylogueCore

extension Composition {
    /// Readies the built-in demo for the web app (`serve --demo`): its
    /// people on the household's list when nobody else is on it, the demo
    /// user's generated history in the archive (so `demo` is charted from it,
    /// as an imported history is, and as the benchmarks measure), and every
    /// album's generated cover registered. The friends are not archived:
    /// `DemoChartSource` computes their pages, album life and rediscover
    /// included, so starting costs no more than it did with `demo` alone.
    func startDemo(lists: any ListStore, archive: any ScrobbleArchive, covers: DemoCoverCatalogue) async throws {
        let household = demo.household
        let listed = try await lists.users()
        // A list an older demo made, of `demo` alone, gets the friends too.
        if listed.allSatisfy({ $0.username == DemoHistory.username }) {
            try await lists.addAll(household.members.map(\.username))
        }
        try await GeneratedHistory(history: household.demo.history, user: household.demo.username, store: archive).fill(now: clock.now)
        registerDemoCovers(covers)
    }

    /// Every demo album's generated cover, registered so it can be drawn
    /// (when the first demo cover is asked for).
    func registerDemoCovers(_ covers: DemoCoverCatalogue) {
        let demo = demo
        covers.registerWhenAsked {
            demo.household.members.flatMap { member in member.history.catalog.albums.map { (artist: $0.artist, album: $0.name) } }
        }
    }

    /// Without the demo its people are not on the household's list: a list
    /// with the generated `demo` on it is one the demo made, and its people
    /// are taken off it, so a real instance on the same data directory
    /// starts from an empty list (or from the people added to it since)
    /// instead of five it cannot chart. A `demo` added by hand is Last.fm's,
    /// with no generated history, and leaves the list alone.
    func leaveDemoOut(lists: any ListStore, archive: any ScrobbleArchive) async throws {
        guard try await lists.user(DemoHistory.username) != nil, try await archive.generatedThrough(of: DemoHistory.username) != nil else { return }
        for name in DemoHousehold.usernames { try await lists.remove(name) }
    }
}
