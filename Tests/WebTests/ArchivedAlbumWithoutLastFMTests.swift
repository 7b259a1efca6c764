import Foundation
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore

/// An archived user's album page with Last.fm failing: it stands on the
/// archive (the album's life, the week's plays), says that the album's
/// description and tags cannot be loaded right now, and is complete again
/// once Last.fm answers. (With Last.fm stopped altogether, and covers
/// remembered: `ArchiveCoverTests`.)
@Suite struct ArchivedAlbumWithoutLastFMTests {
    /// The start of the sentence the page says it with.
    static let detailsNote = "This album’s description and tags from Last.fm cannot be loaded right now"
    static let page = "/u/offliner/album/Local%20Artist/Offline%20Album?week=2020-07-08"

    @Test func thePageStandsOnTheArchiveAndRecoversWhenLastFMIsBack() async throws {
        try await Harness.run { harness, client in
            try await SQLiteScrobbleStore(database: harness.database).store(KeptAnswersTests.plays(6), of: KeptAnswersTests.user,
                                                                        origin: .lastFMExport)
            await harness.fake.inject(.init(.httpStatus(503), method: "album.getinfo"))
            let failing = try await client.get(Self.page)
            #expect(failing.status == .ok)
            #expect(failing.body.contains("In offliner’s listening"))
            #expect(failing.body.containsInOrder(["offliner that week", "6 plays"]))
            #expect(failing.body.contains(Self.detailsNote))
            #expect(failing.body.contains("Try again in a few minutes."))
            #expect(!failing.body.contains("Album details are unavailable"))
            #expect(!failing.body.contains("is an album by"))
            // Its share card (which shows nothing of Last.fm's details) stands too.
            let image = try #require(try captures(#"<meta property="og:image" content="https?://[^/"]+([^"]+)">"#, in: failing.body).first)
            #expect(image.hasPrefix("/u/offliner/album/Local%20Artist/Offline%20Album/card.png?week="))
            let card = try await client.getOnce(image)
            #expect(card.status == .ok)
            #expect(card.headers[.contentType] == "image/png")

            // Last.fm is back: the next visit is the whole page (the one
            // above was kept nowhere).
            await harness.fake.clearFaults()
            let back = try await client.get(Self.page)
            #expect(back.status == .ok)
            #expect(back.body.contains("Offline Album is an album by Local Artist."))
            #expect(back.body.contains("In offliner’s listening"))
            #expect(!back.body.contains(Self.detailsNote))
        }
    }

    /// Without the album in the archive there is nothing to stand on: the
    /// page still says Last.fm failed, with its status.
    @Test func anAlbumNotInTheArchiveStillSaysLastFMFailed() async throws {
        try await Harness.run { harness, client in
            try await SQLiteScrobbleStore(database: harness.database).store(KeptAnswersTests.plays(6), of: KeptAnswersTests.user,
                                                                        origin: .lastFMExport)
            await harness.fake.inject(.init(.httpStatus(503), method: "album.getinfo"))
            let page = try await client.get("/u/offliner/album/Someone%20Else/Never%20Played")
            #expect(page.status == .badGateway)
            #expect(page.body.contains("Album details are unavailable"))
            #expect(!page.body.contains(Self.detailsNote))
            #expect(try await client.getOnce("/u/offliner/album/Someone%20Else/Never%20Played/card.png").status == .badGateway)
        }
    }
}
