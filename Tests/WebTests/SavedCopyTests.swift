import Foundation
import HummingbirdTesting
import Testing

/// When Last.fm fails and a saved copy stands in, every page that can say
/// so does.
@Suite struct SavedCopyTests {
    @Test func theEveryYearPageNotesASavedCopy() async throws {
        try await Harness.run { harness, client in
            let first = try await client.get("/u/ybsc/history")
            #expect(first.status == .ok)
            #expect(!first.body.contains("Showing a saved copy"))
            // Sunday afternoon a week has closed, so the chart list is due for
            // a refresh, but Last.fm fails to give it.
            harness.clock.advance(days: 1.2)
            await harness.fake.inject(.init(.apiError(code: 11, status: 503), method: "user.getweeklychartlist"))
            let later = try await client.get("/u/ybsc/history")
            #expect(later.status == .ok)
            #expect(later.body.containsInOrder(["Showing a saved copy: Last.fm is temporarily unavailable", "Live at The Electric Ballroom"]))
        }
    }

    @Test func theAlbumPageNotesASavedCopy() async throws {
        try await Harness.run { harness, client in
            let uri = "/u/ybsc/album/Paramore/Paramore?week=2020-07-08"
            #expect(try await client.get(uri).body.contains("17 plays"))
            harness.clock.advance(days: 1.2)
            await harness.fake.inject(.init(.apiError(code: 11, status: 503), method: "user.getweeklychartlist"))
            let later = try await client.get(uri)
            #expect(later.status == .ok)
            #expect(later.body.contains("Showing a saved copy: Last.fm is temporarily unavailable"))
            #expect(later.body.contains("17 plays"))  // the week's plays, from the saved list
        }
    }

    /// A feed has nowhere to say so: it serves the saved copy as it is.
    @Test func theFeedServesASavedCopy() async throws {
        try await Harness.run { harness, client in
            #expect(try await client.get("/u/ybsc/feed.atom?years_ago=3").body.contains("Live at The Electric Ballroom"))
            harness.clock.advance(days: 8)
            await harness.fake.inject(.init(.apiError(code: 11, status: 503)))
            let later = try await client.get("/u/ybsc/feed.atom?years_ago=3")
            #expect(later.status == .ok)
            #expect(later.body.contains("1. PUP – Live at The Electric Ballroom (22 plays)"))
        }
    }
}
