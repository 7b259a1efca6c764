import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore

/// Forwarding as a person meets it: turned on in the settings, listens
/// sent to `/1/` reach the (fake) Last.fm once, and the settings page says
/// how it stands; in a household (no sign-in) Last.fm forwarding is not
/// offered.
@Suite(.timeLimit(.minutes(2))) struct ForwardingRouteTests {
    typealias Listens = ListenSubmissionTests

    @Test func listensSentHereReachLastFMOnceAndTheSettingsSaySo() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            var page = try await SignInTests.page(client, "/settings", rj)
            #expect(page.body.contains("Listens do not go on to Last.fm."))
            let on = try await client.post("/settings/forwarding", ["lastfm": "on"], session: rj.form)
            #expect(on.status == .seeOther && on.headers[.location] == "/settings?forwarding=lastfm-on#forwarding")
            page = try await SignInTests.page(client, "/settings?forwarding=lastfm-on", rj)
            #expect(page.body.contains("Listens you send here now go on to Last.fm too."))
            #expect(page.body.contains("Stop sending them to Last.fm"))

            let token = try await Listens.newToken(client, session: rj.form)
            let body = Listens.payload("import", (0..<3).map { Listens.listen(at: Listens.now - 900 - Int64($0) * 300, track: "T\($0)") })
            #expect(try await Listens.submit(client, token: token, body).status == .ok)
            // The player retries: kept once, forwarded once.
            #expect(try await Listens.submit(client, token: token, body).status == .ok)
            await harness.fake.untilScrobbled(3, by: "RJ")
            let received = await harness.fake.scrobbles()["RJ"] ?? []
            #expect(received.map(\.track) == ["T2", "T1", "T0"])
            #expect(received.allSatisfy { $0.artist == "Received Artist" && $0.album == "Received Album" })

            // The page reads the outbox, which the sender settles just after Last.fm answers.
            var state = ""
            for _ in 0..<200 {
                state = try await SignInTests.page(client, "/settings", rj).body
                if state.contains("3 sent") { break }
                await Task.yield()
            }
            #expect(state.contains("<p>3 sent, the last on 8 July 2023, 09:00.</p>"), "\(state)")
            #expect(await harness.fake.scrobbles()["RJ"]?.count == 3)

            // "Now playing" goes on too, as Last.fm's `track.updateNowPlaying`
            // (not a scrobble, and not kept in the outbox).
            let playing = Listens.payload("playing_now", [Listens.listen(at: nil, track: "Playing Now")])
            #expect(try await Listens.submit(client, token: token, playing).status == .ok)
            await harness.fake.untilPlayingNow("Playing Now", by: "RJ")
            #expect(await harness.fake.nowPlaying()["RJ"]?.artist == "Received Artist")
            #expect(await harness.fake.scrobbles()["RJ"]?.count == 3)

            let off = try await client.post("/settings/forwarding", ["lastfm": "off"], session: rj.form)
            #expect(off.status == .seeOther)
            #expect(try await SignInTests.page(client, "/settings", rj).body.contains("Listens do not go on to Last.fm."))
        }
    }

    /// A household forwards to ListenBrainz with a token ListenBrainz
    /// confirmed; the page names the ListenBrainz user, never the token.
    @Test func aHouseholdForwardsToListenBrainzWithACheckedToken() async throws {
        try await Harness.run { harness, client in
            let (first, session) = try await Listens.householdToken(harness, client)
            #expect(try await client.get("/settings", session: session).body.contains("ListenBrainz user token"))
            // The page that shows a new token has the forwarding section too (it once had not).
            let renewed = try await client.post("/settings/listen-token", [:], session: session)
            #expect(renewed.body.contains("Forward your listens") && renewed.body.contains("ListenBrainz user token"))
            #expect(try await Listens.validate(client, token: first).json["valid"] as? Bool == false)
            let token = try await Listens.newToken(client, session: session)
            let wrong = try await client.post("/settings/forwarding", ["listenbrainz-token": "not-a-token"], session: session)
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.body.contains("ListenBrainz refused the token (it is wrong or was replaced)."))
            let right = try await client.post("/settings/forwarding", ["listenbrainz-token": "test-token"], session: session)
            #expect(right.status == .seeOther)
            let page = try await client.get("/settings?forwarding=listenbrainz-on", session: session)
            #expect(page.body.contains("Listens go on to ListenBrainz as <strong>rob</strong>."))
            #expect(page.body.contains("Listens you send here now go on to ListenBrainz too."))
            #expect(!page.body.contains("test-token"))

            let body = Listens.payload("import", (0..<3).map { Listens.listen(at: Listens.now - 900 - Int64($0) * 300, track: "LB\($0)") })
            #expect(try await Listens.submit(client, token: token, body).status == .ok)
            await harness.listenBrainz.untilKept(3)
            let received = await harness.listenBrainz.received()
            #expect(received.listens.map(\.listen.track) == ["LB2", "LB1", "LB0"] && received.listens.allSatisfy { $0.user == "rob" })

            // "Now playing" goes on as ListenBrainz's `playing_now`, nothing stored.
            let playing = Listens.payload("playing_now", [Listens.listen(at: nil, track: "On Air")])
            #expect(try await Listens.submit(client, token: token, playing).status == .ok)
            await harness.listenBrainz.untilPlayingNow("On Air", by: "rob")
            #expect(await harness.listenBrainz.received().listens.count == 3)
            // And from a player that speaks Last.fm's protocol here.
            let key = try await LastFMScrobbleTests.signIn(client, "listener", token: token)
            let nowPlaying = try await LastFMScrobbleTests.call(client, ["method": "track.updateNowPlaying", "sk": key, "artist": "Now Artist",
                                                                       "track": "Through 2.0", "duration": "200"])
            #expect(nowPlaying.status == .ok)
            await harness.listenBrainz.untilPlayingNow("Through 2.0", by: "rob")

            // The page's own notices stay its own: the forwarding section
            // once showed "Settings saved." a second time (Mustache found the
            // page's `notice` when the section had none).
            let saved = try await client.get("/settings?saved=1", session: session)
            #expect(saved.body.components(separatedBy: "Settings saved.").count == 2, "\(saved.body)")

            let off = try await client.post("/settings/forwarding", ["listenbrainz": "off"], session: session)
            #expect(off.status == .seeOther)
            #expect(try await client.get("/settings", session: session).body.contains("ListenBrainz user token"))
        }
    }

    @Test func aHouseholdIsNotOfferedLastFM() async throws {
        try await Harness.run { harness, client in
            let (_, session) = try await Listens.householdToken(harness, client)
            let page = try await client.get("/settings", session: session)
            #expect(!page.body.contains("Send them to Last.fm too"))
            let refused = try await client.post("/settings/forwarding", ["lastfm": "on"], session: session)
            #expect(refused.status == .notFound || refused.status == .unprocessableContent)
        }
    }
}
