import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

/// A week's playlist on ListenBrainz, over HTTP and in this process alike:
/// its tracks with recording ids, private, replacing the user's own of the
/// same title; the fake validating the JSPF as ListenBrainz's
/// `playlist_api.py` does (a track identifier a string; `public` a boolean).
@Suite struct PlaylistTests {
    static let recordings = ["4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70", "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"]

    static func week(annotation: String = "rob’s albums") throws -> AlbumPlaylist {
        let week = ChartWeek(from: 1_605_441_600, to: 1_605_441_600 + LastFMWeekCalendar.weekLength)
        let built = WeekPlaylist.build(user: try Username("rob"), week: week, yearsAgo: 5, entries: [
            ChartEntry(rank: 1, artist: "Low", name: "Things We Lost in the Fire", plays: 3),
        ], scrobbles: [
            Scrobble(instant: week.from + 60, artist: "Low", album: "Things We Lost in the Fire", track: "Sunflower", trackMBID: recordings[0]),
            Scrobble(instant: week.from + 120, artist: "Low", album: "Things We Lost in the Fire", track: "Dinosaur Act"),
            Scrobble(instant: week.from + 180, artist: "Low", album: "Things We Lost in the Fire", track: "Closer", trackMBID: recordings[1]),
        ])
        return AlbumPlaylist(user: built.user, title: built.title, annotation: annotation, fileStem: "2020-11-16", albums: built.albums)
    }

    @Test func theWeekIsSavedPrivateWithItsRecordingsAndReplacedWhenSavedAgain() async throws {
        try await InProcessTransportTests.withBoth { fake, overHTTP, here in
            for client in [overHTTP, here] {
                let saved = try #require(try await client.save(try Self.week(), token: "test-token"))
                #expect(saved.user == "rob" && saved.tracks == 2 && saved.leftOut == 1)
                let kept = await fake.playlists()
                #expect(kept.count == 1, "saved again, replaced: \(kept)")
                #expect(kept.first?.mbid == saved.mbid)
                #expect(kept.first?.title == "Vinylogue — this week, 5 years ago")
                #expect(kept.first?.recordings == Self.recordings && kept.first?.isPublic == false)
                #expect(kept.first?.annotation == "rob’s albums")
                #expect(saved.address == "https://listenbrainz.org/playlist/\(saved.mbid)")
            }
            // The second save replaced the first.
            #expect(try await here.playlists(of: "rob", token: "test-token").map(\.title) == ["Vinylogue — this week, 5 years ago"])
            // Private: someone else does not see it.
            await fake.accept(token: "ana-token", for: "ana")
            #expect(try await here.playlists(of: "rob", token: "ana-token").isEmpty)
        }
    }

    /// Replaced by making the new one first: a create ListenBrainz refuses
    /// leaves the one from before (the probe found it deleted first).
    @Test func aRefusedSaveLeavesThePlaylistFromBefore() async throws {
        try await InProcessTransportTests.withBoth { fake, _, here in
            let first = try #require(try await here.save(try Self.week(), token: "test-token"))
            await fake.inject(.init(.httpStatus(400), endpoint: "playlist-create", times: 1))
            await #expect(throws: SourceError.self) { _ = try await here.save(try Self.week(), token: "test-token") }
            #expect(await fake.playlists().map(\.mbid) == [first.mbid])
            let again = try #require(try await here.save(try Self.week(), token: "test-token"))
            #expect(again.replaced)
            #expect(await fake.playlists().map(\.mbid) == [again.mbid])
        }
    }

    @Test func aBadTokenAndAWeekWithoutRecordingIdsSaveNothing() async throws {
        try await InProcessTransportTests.withBoth { fake, _, here in
            await #expect(throws: SourceError.listenBrainz(.invalidToken)) {
                _ = try await here.save(try Self.week(annotation: ""), token: "not a token")
            }
            let week = ChartWeek(from: 1_605_441_600, to: 1_605_441_600 + LastFMWeekCalendar.weekLength)
            let bare = WeekPlaylist.build(user: try Username("rob"), week: week, yearsAgo: 1,
                                          entries: [ChartEntry(rank: 1, artist: "Low", name: "C'mon", plays: 1)],
                                          scrobbles: [Scrobble(instant: week.from + 60, artist: "Low", album: "C'mon", track: "Try to Sleep")])
            #expect(try await here.save(bare.playlist(labels: WeekLabels(timeZone: .gmt)), token: "test-token") == nil)
            #expect(await fake.playlists().isEmpty)
        }
    }

    @Test func theFakeRefusesWhatListenBrainzRefuses() async throws {
        try await InProcessTransportTests.withBoth { _, _, here in
            // A track identifier as a list (the shape ListenBrainz writes, not the one it takes).
            await #expect(throws: SourceError.self) {
                _ = try await here.createPlaylist(title: "", annotation: nil, recordings: [], isPublic: false, token: "test-token")
            }
            await #expect(throws: SourceError.self) {
                _ = try await here.createPlaylist(title: "x", annotation: nil, recordings: ["not-a-uuid"], isPublic: true, token: "test-token")
            }
            let made = try await here.createPlaylist(title: "x", annotation: nil, recordings: Self.recordings, isPublic: true, token: "test-token")
            try await here.deletePlaylist(made, token: "test-token")
            await #expect(throws: SourceError.self) { try await here.deletePlaylist(made, token: "test-token") }
        }
    }
}
