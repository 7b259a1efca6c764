import Artwork
import Stores
import Sync
import VinylogueCore

extension Composition {
    /// Readies the built-in demo for the web app (`serve --demo`): its
    /// people on the household's list when nobody else is on it, their
    /// generated histories in the archive, so they are charted from it as an
    /// imported history is (album life, rediscover, every year in one
    /// query), and their albums' generated covers registered.
    func startDemo(lists: any ListStore, archive: any ScrobbleArchive, covers: DemoCoverCatalogue) async throws {
        let household = demo.household
        let listed = try await lists.users()
        // A list an older demo made, of `demo` alone, gets the friends too.
        if listed.allSatisfy({ $0.username == DemoHistory.username }) {
            try await lists.addAll(household.members.map(\.username))
        }
        let now = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for member in household.members {
                group.addTask {
                    try await GeneratedHistory(history: member.history, user: member.username, store: archive).fill(now: now)
                }
            }
            try await group.waitForAll()
        }
        for member in household.members {
            for album in member.history.catalog.albums { covers.register(artist: album.artist, album: album.name) }
        }
    }

    /// Without the demo its people are not on the household's list: those
    /// an earlier `serve --demo` put there (their archive is the generated
    /// one) are taken off it, so a real instance on the same data directory
    /// starts from an empty list instead of five people it cannot chart.
    func leaveDemoOut(lists: any ListStore, archive: any ScrobbleArchive) async throws {
        for name in DemoHousehold.usernames where try await lists.user(name) != nil {
            if try await archive.generatedThrough(of: name) != nil { try await lists.remove(name) }
        }
    }
}
