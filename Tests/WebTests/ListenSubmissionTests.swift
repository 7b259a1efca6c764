import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore

/// The ListenBrainz-compatible API (`/1/submit-listens`, `/1/validate-token`):
/// tokens made on the settings page, what is accepted and stored, and every
/// way a payload or a token is refused with nothing stored.
@Suite struct ListenSubmissionTests {
    /// The household's "me" in these tests: a name Last.fm does not know,
    /// so every chart of it comes from the archive.
    static let listener = "listener"
    /// The harness's clock, in Unix seconds.
    static let now = Int64(july2023.timeIntervalSince1970)

    /// Puts the listener on the household list (as "me") and makes their
    /// token through the settings page, as a person would.
    static func householdToken(_ harness: Harness, _ client: some TestClientProtocol) async throws -> (token: String, session: Session) {
        try await harness.lists.add(try Username(listener))
        let session = try await client.session()
        return (try await newToken(client, session: session), session)
    }

    /// `POST /settings/listen-token` and the token the page shows once.
    static func newToken(_ client: some TestClientProtocol, session: Session) async throws -> String {
        let page = try await client.post("/settings/listen-token", [:], session: session)
        #expect(page.status == .ok, "\(page.body)")
        #expect(page.headers[.cacheControl] == "no-store")
        let start = try #require(page.body.range(of: "<code class=\"listen-token\">"))
        let token = String(page.body[start.upperBound...].prefix(64))
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        return token
    }

    static func submit(_ client: some TestClientProtocol, token: String?, _ body: String,
                       authorization: String? = nil) async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        var headers: HTTPFields = [:]
        if let value = authorization ?? token.map({ "Token \($0)" }) { headers[.authorization] = value }
        let response = try await client.execute(uri: "/1/submit-listens", method: .post, headers: headers, body: ByteBuffer(string: body))
        return (response.status, try Self.object(response.body))
    }

    static func validate(_ client: some TestClientProtocol, token: String?) async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        let headers: HTTPFields = token.map { [.authorization: "Token \($0)"] } ?? [:]
        let response = try await client.execute(uri: "/1/validate-token", method: .get, headers: headers, body: nil)
        return (response.status, try Self.object(response.body))
    }

    static func object(_ body: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any], "\(String(buffer: body))")
    }

    /// One listen's JSON.
    static func listen(at instant: Int64?, artist: String = "Received Artist", track: String = "Received Track",
                       album: String = "Received Album", extra: String = "") -> String {
        let time = instant.map { #""listened_at": \#($0), "# } ?? ""
        return #"{\#(time)"track_metadata": {"artist_name": "\#(artist)", "track_name": "\#(track)", "release_name": "\#(album)"\#(extra)}}"#
    }

    static func payload(_ type: String, _ listens: [String]) -> String {
        #"{"listen_type": "\#(type)", "payload": [\#(listens.joined(separator: ","))]}"#
    }

    static func stored(_ harness: Harness, _ user: String = listener) async throws -> Int {
        try await SQLiteScrobbleStore(database: harness.database).scrobbleCount(of: try Username(user))
    }

    @Test func aTokenIsValidatedInListenBrainzShapes() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let valid = try await Self.validate(client, token: token)
            #expect(valid.status == .ok)
            #expect(valid.json["code"] as? Int == 200 && valid.json["valid"] as? Bool == true)
            #expect(valid.json["message"] as? String == "Token valid." && valid.json["user_name"] as? String == Self.listener)

            let wrong = try await Self.validate(client, token: String(repeating: "ab", count: 32))
            #expect(wrong.status == .ok)
            #expect(wrong.json["valid"] as? Bool == false && wrong.json["message"] as? String == "Token invalid.")
            #expect(wrong.json["user_name"] == nil)

            let missing = try await Self.validate(client, token: nil)
            #expect(missing.status == .badRequest && missing.json["code"] as? Int == 400)
            #expect((missing.json["error"] as? String)?.isEmpty == false)
        }
    }

    @Test func aNewTokenReplacesTheOldOneAtOnce() async throws {
        try await Harness.run { harness, client in
            let (old, session) = try await Self.householdToken(harness, client)
            let settings = try await client.get("/settings", session: session)
            #expect(settings.body.contains("You have a token, made"))
            #expect(settings.body.contains("go into the archive of <strong>listener</strong>"))
            #expect(!settings.body.contains(old), "the settings page shows a token only when it is made")

            let new = try await Self.newToken(client, session: session)
            #expect(new != old)
            let listen = Self.payload("single", [Self.listen(at: Self.now - 600)])
            let refused = try await Self.submit(client, token: old, listen)
            #expect(refused.status == .unauthorized && refused.json["code"] as? Int == 401)
            #expect(try await Self.validate(client, token: old).json["valid"] as? Bool == false)
            #expect(try await Self.stored(harness) == 0)

            let accepted = try await Self.submit(client, token: new, listen)
            #expect(accepted.status == .ok && accepted.json["status"] as? String == "ok")
            #expect(try await Self.validate(client, token: new).json["valid"] as? Bool == true)
            #expect(try await Self.stored(harness) == 1)
        }
    }

    /// Making a token is a form like the others: without the CSRF token it
    /// is refused, and the token in use keeps working.
    @Test func makingATokenNeedsTheFormsCSRFToken() async throws {
        try await Harness.run { harness, client in
            let (token, session) = try await Self.householdToken(harness, client)
            let forged = try await client.post("/settings/listen-token", [:], session: session, token: String(repeating: "0", count: 64))
            #expect(forged.status == .forbidden)
            #expect(try await Self.validate(client, token: token).json["valid"] as? Bool == true)
        }
    }

    @Test func missingOrWrongTokensAre401AndStoreNothing() async throws {
        try await Harness.run { harness, client in
            _ = try await Self.householdToken(harness, client)
            let listen = Self.payload("single", [Self.listen(at: Self.now - 600)])
            for authorization in [nil, "Token", "Bearer " + String(repeating: "ab", count: 32), "Token " + String(repeating: "ab", count: 32), "Token x"] {
                let answer = try await Self.submit(client, token: nil, listen, authorization: authorization)
                #expect(answer.status == .unauthorized, "\(authorization ?? "no header")")
                #expect(answer.json["code"] as? Int == 401)
                #expect((answer.json["error"] as? String)?.hasSuffix(".") == true)
            }
            #expect(try await Self.stored(harness) == 0)
        }
    }

    /// Household tokens submit for the list's "me": without one, the token
    /// says so instead of storing listens for nobody.
    @Test func aHouseholdWithoutMeIsToldToAddThemselves() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let token = try await Self.newToken(client, session: session)
            let answer = try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now - 600)]))
            #expect(answer.status == .unauthorized)
            #expect((answer.json["error"] as? String)?.contains("add yourself") == true)
            #expect(try await Self.validate(client, token: token).json["valid"] as? Bool == false)
            #expect(try await client.get("/settings", session: session).body.contains("Nobody on the list is marked as you yet"))
        }
    }

    @Test func badPayloadsAreRefusedWholeWithASentence() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let good = Self.listen(at: Self.now - 600)
            let cases: [(String, String)] = [
                ("not json", "not a JSON document"),
                ("[]", "must be an object"),
                ("{}", "listen_type and payload"),
                (#"{"listen_type": "single"}"#, "listen_type and payload"),
                (#"{"payload": []}"#, "listen_type and payload"),
                (Self.payload("bogus", [good]), "listen_type must be one of"),
                (#"{"listen_type": 1, "payload": []}"#, "listen_type must be one of"),
                (#"{"listen_type": "import", "payload": {}}"#, "payload must be a list"),
                (Self.payload("import", []), "does not contain any listens"),
                (Self.payload("single", [good, Self.listen(at: Self.now - 1200)]), "exactly one listen"),
                (Self.payload("playing_now", [Self.listen(at: nil), Self.listen(at: nil)]), "exactly one listen"),
                (Self.payload("playing_now", [Self.listen(at: Self.now)]), "must not contain listened_at"),
                (Self.payload("single", [Self.listen(at: nil)]), "must contain listened_at"),
                (Self.payload("single", ["1"]), "not a JSON object"),
                (Self.payload("single", [#"{"listened_at": "1688806000", "track_metadata": {"artist_name": "A", "track_name": "T"}}"#]), "whole number"),
                (Self.payload("single", [#"{"listened_at": 1688806000.5, "track_metadata": {"artist_name": "A", "track_name": "T"}}"#]), "whole number"),
                (Self.payload("single", [#"{"listened_at": true, "track_metadata": {"artist_name": "A", "track_name": "T"}}"#]), "whole number"),
                (Self.payload("single", [Self.listen(at: Self.now + 3600)]), "in the future"),
                (Self.payload("single", [Self.listen(at: 1_000_000_000)]), "before 2002"),
                (Self.payload("single", [#"{"listened_at": 1688806000}"#]), "track_metadata"),
                (Self.payload("single", [#"{"listened_at": 1688806000, "track_metadata": "A - T"}"#]), "track_metadata"),
                (Self.payload("single", [#"{"listened_at": 1688806000, "track_metadata": {"track_name": "T"}}"#]), "artist_name"),
                (Self.payload("single", [#"{"listened_at": 1688806000, "track_metadata": {"artist_name": 7, "track_name": "T"}}"#]), "artist_name must be a string"),
                (Self.payload("single", [#"{"listened_at": 1688806000, "track_metadata": {"artist_name": "A"}}"#]), "track_name"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, track: "  ")]), "track_name must not be empty"),
                (Self.payload("single", [#"{"listened_at": 1688806000, "track_metadata": {"artist_name": "A", "track_name": "T", "release_name": ["R"]}}"#]), "release_name must be a string"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": "x""#)]), "additional_info must be an object"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"release_mbid": "nope"}"#)]), "release_mbid"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"recording_mbid": 5}"#)]), "recording_mbid"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"artist_mbids": "0383dadf-2a4e-4d10-a46a-e9e041da8eb3"}"#)]), "artist_mbids"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"duration_ms": -5}"#)]), "duration_ms"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"release_artist_name": ["V"]}"#)]),
                 "release_artist_name must be a string"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"release_group_mbid": "x"}"#)]),
                 "release_group_mbid"),
                (Self.payload("single", [Self.listen(at: Self.now - 600, extra: #", "additional_info": {"duration_ms": "200000"}"#)]), "duration_ms"),
                // One bad listen among good ones: the whole import is refused.
                (Self.payload("import", [good, Self.listen(at: Self.now - 1200), Self.listen(at: 5)]), "Listen 3's listened_at"),
                // Nesting deep enough to overflow a recursive reader's stack.
                (#"{"listen_type": "import", "payload": "# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}",
                 "JSON"),
                (Self.payload("import", (0...1000).map { Self.listen(at: Self.now - 600 - Int64($0) * 200, track: "T\($0)") }), "at most 1000 listens"),
            ]
            for (body, sentence) in cases {
                let answer = try await Self.submit(client, token: token, body)
                #expect(answer.status == .badRequest, "\(body.prefix(200))")
                #expect(answer.json["code"] as? Int == 400)
                let error = answer.json["error"] as? String ?? ""
                #expect(error.contains(sentence), "\(error) for \(body.prefix(200))")
                #expect(error.hasSuffix("."), "\(error)")
            }
            #expect(try await Self.stored(harness) == 0)

            // A player's clock a few minutes ahead is within the allowance.
            #expect(try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now + 300)])).status == .ok)
            #expect(try await Self.stored(harness) == 1)
        }
    }

    @Test func anOversizedBodyIsRefusedUnread() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let filler = String(repeating: " ", count: 10_240_000)
            let answer = try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now - 600)]) + filler)
            #expect(answer.status == .contentTooLarge && answer.json["code"] as? Int == 413)
            #expect(try await Self.stored(harness) == 0)
        }
    }

    /// A listen is in the chart JSON of its week right after the 200, and
    /// the chart page kept in memory before it is not served again.
    @Test func listensAppearInTheirWeeksChartAtOnce() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let ids = #", "additional_info": {"artist_mbids": ["0383dadf-2a4e-4d10-a46a-e9e041da8eb3"], "release_mbid": "9e53a5ba-8d36-3d2b-a6ce-0b4a5bb08d8f", "recording_mbid": "c4b8a2e1-1b0b-4b5c-9d0a-2f9f6a1d7e21", "duration_ms": 215000}"#
            let first = try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now - 3600, extra: ids)]))
            #expect(first.status == .ok && first.json["status"] as? String == "ok")
            let chart = try await client.get("/api/u/listener/chart?week=2023-07-08")
            #expect(chart.status == .ok)
            #expect(chart.body.containsInOrder(["Received Artist", "9e53a5ba-8d36-3d2b-a6ce-0b4a5bb08d8f", "Received Album", "\"plays\" : 1"]), "\(chart.body)")

            // The page is rendered (and kept), then another listen arrives.
            let page = try await client.get("/u/listener/week/2023-07-08")
            #expect(page.body.contains("Received Album") && !page.body.contains("Second Album"))
            let second = try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now - 1800, artist: "Second Artist", album: "Second Album")]))
            #expect(second.status == .ok)
            #expect(try await client.get("/u/listener/week/2023-07-08").body.contains("Second Album"))
            #expect(try await client.get("/api/u/listener/chart?week=2023-07-08").body.contains("Second Album"))
        }
    }

    /// A compilation's listens name their album artist: they are one album
    /// of it in the chart, each track's artist in the artist chart, and
    /// the stored listens keep the name as sent.
    @Test func aCompilationsListensAreOneAlbumOfTheirAlbumArtist() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let listens = ["Blur", "Pulp", "Oasis"].enumerated().map { n, artist in
                Self.listen(at: Self.now - 3600 + Int64(n) * 240, artist: artist, track: "Hit \(n)", album: "Now 50",
                            extra: #", "additional_info": {"release_artist_name": "Various Artists", "release_group_mbid": "5E0E1E5A-3A0B-4E5C-8B1D-2C3D4E5F6A7B"}"#)
            } + [Self.listen(at: Self.now - 600, artist: "Blur", track: "Parklife", album: "Now 50",
                             extra: #", "additional_info": {"release_artist_name": ""}"#)]
            #expect(try await Self.submit(client, token: token, Self.payload("import", listens)).status == .ok)
            let stored = try await SQLiteScrobbleStore(database: harness.database)
                .scrobbles(of: try Username(Self.listener), from: Self.now - 7200, to: Self.now)
            #expect(stored.map { $0.albumArtist ?? "-" } == ["Various Artists", "Various Artists", "Various Artists", "-"])
            #expect(stored.map { $0.releaseGroupMBID ?? "-" } == Array(repeating: "5e0e1e5a-3a0b-4e5c-8b1d-2c3d4e5f6a7b", count: 3) + ["-"])
            let albums = try await client.get("/api/u/listener/chart?week=2023-07-08")
            #expect(albums.body.containsInOrder(["\"artist\" : \"Various Artists\"", "\"name\" : \"Now 50\"", "\"plays\" : 3",
                                                "\"artist\" : \"Blur\"", "\"name\" : \"Now 50\"", "\"plays\" : 1"]), "\(albums.body)")
            let artists = try await client.get("/api/u/listener/chart?week=2023-07-08&kind=artist")
            #expect(artists.body.contains("\"name\" : \"Blur\"") && !artists.body.contains("Various Artists"), "\(artists.body)")
        }
    }

    /// Playing now is accepted and remembered, never stored as a listen.
    @Test func playingNowIsAcceptedButNotStored() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let answer = try await Self.submit(client, token: token, Self.payload("playing_now", [Self.listen(at: nil)]))
            #expect(answer.status == .ok && answer.json["status"] as? String == "ok")
            #expect(try await Self.stored(harness) == 0)
        }
    }

    /// What is playing shows on the person's own chart page while it lasts
    /// (escaped), and the page that showed it is never served from memory
    /// once the track has ended.
    @Test func playingNowShowsOnTheChartPageWhileItLasts() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            #expect(try await Self.submit(client, token: token, Self.payload("single", [Self.listen(at: Self.now - 3 * 365 * 86400)])).status == .ok)
            let before = try await client.get("/u/listener")
            #expect(before.status == .ok && !before.body.contains("Now playing"))
            let playing = Self.listen(at: nil, artist: "<b>Loud</b> & Co", track: "Right Now", album: "Live",
                                      extra: #", "additional_info": {"duration_ms": 240000}"#)
            #expect(try await Self.submit(client, token: token, Self.payload("playing_now", [playing])).status == .ok)
            for _ in 0..<2 {
                let page = try await client.get("/u/listener")
                #expect(page.body.contains("Now playing: “Right Now” by &lt;b&gt;Loud&lt;/b&gt; &amp; Co, from Live"), "\(page.body)")
            }
            // Only on that person's page.
            #expect(!(try await client.get("/u/demo")).body.contains("Now playing"))
            harness.clock.advance(days: 241.0 / 86400)
            let after = try await client.get("/u/listener")
            #expect(after.status == .ok && !after.body.contains("Now playing"))
        }
    }

    /// An import of 1,000 listens is stored whole; sending it again stores
    /// nothing more (the archive's duplicate rule), and a copy a few seconds
    /// off (another player's clock) is the same listens too.
    @Test func anImportOfAThousandIsStoredOnceHoweverOftenItIsSent() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Self.householdToken(harness, client)
            let listens = (0..<1000).map { Self.listen(at: Self.now - 600 - Int64($0) * 200, album: "Import Album", extra: "").replacingOccurrences(of: "Received Track", with: "Track \($0)") }
            let body = Self.payload("import", listens)
            #expect(try await Self.submit(client, token: token, body).status == .ok)
            #expect(try await Self.stored(harness) == 1000)
            #expect(try await Self.submit(client, token: token, body).status == .ok)
            #expect(try await Self.stored(harness) == 1000)
            let shifted = Self.payload("import", (0..<1000).map { Self.listen(at: Self.now - 590 - Int64($0) * 200).replacingOccurrences(of: "Received Track", with: "Track \($0)") })
            #expect(try await Self.submit(client, token: token, shifted).status == .ok)
            #expect(try await Self.stored(harness) == 1000)
            // 1,000 listens 200 s apart end 55 hours back: all in this week or the one before.
            let chart = try await client.get("/api/u/listener/chart?week=2023-07-08&kind=artist")
            #expect(chart.body.contains("Received Artist"))
        }
    }

    /// With sign-in, each account's token submits into its own archive
    /// user only; a visitor has no token to make.
    @Test func anAccountsTokenWritesOnlyIntoItsOwnArchive() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let ybsc = try await SignInTests.signIn(client, harness, as: "ybsc")
            let rjToken = try await Self.newToken(client, session: rj.form)
            let ybscToken = try await Self.newToken(client, session: ybsc.form)
            #expect(try await Self.validate(client, token: rjToken).json["user_name"] as? String == "RJ")
            #expect(try await Self.validate(client, token: ybscToken).json["user_name"] as? String == "ybsc")
            #expect(try await SignInTests.page(client, "/settings", ybsc).body.contains("go into the archive of <strong>ybsc</strong>"))

            #expect(try await Self.submit(client, token: rjToken, Self.payload("single", [Self.listen(at: Self.now - 600)])).status == .ok)
            #expect(try await Self.stored(harness, "RJ") == 1)
            #expect(try await Self.stored(harness, "ybsc") == 0)

            // RJ's new token does not disturb ybsc's.
            let rjNew = try await Self.newToken(client, session: rj.form)
            #expect(try await Self.validate(client, token: rjToken).json["valid"] as? Bool == false)
            #expect(try await Self.validate(client, token: ybscToken).json["valid"] as? Bool == true)

            // With accounts the token is checked in the transaction that keeps
            // the listens: the replaced one stores nothing, and a token that
            // may not send hears so before anything about its body.
            let later = Self.payload("single", [Self.listen(at: Self.now - 500)])
            let unknown = String(repeating: "ab", count: 32)
            for (token, body) in [(rjToken, later), (unknown, later), (rjToken, "{not json"), (unknown, Self.payload("single", []))] {
                let refused = try await Self.submit(client, token: token, body)
                #expect(refused.status == .unauthorized && refused.json["error"] as? String == "Invalid authorization token.", "\(body)")
            }
            #expect(try await Self.submit(client, token: rjNew, "{not json").status == .badRequest)
            #expect(try await Self.submit(client, token: rjNew, Self.payload("playing_now", [Self.listen(at: nil)])).status == .ok)
            #expect(try await Self.stored(harness, "RJ") == 1)
            #expect(try await Self.submit(client, token: rjNew, later).status == .ok)
            #expect(try await Self.stored(harness, "RJ") == 2)
            #expect(try await Self.stored(harness, "ybsc") == 0)

            let csrf = String(repeating: "c", count: 64)
            let visitor = Session(cookie: "vinylogue_csrf=\(csrf)", token: csrf)
            let refused = try await client.post("/settings/listen-token", [:], session: visitor)
            #expect(refused.status == .forbidden)
            #expect(!refused.body.contains("listen-token\">"))
        }
    }

    @Test func onPostgreSQLTokensAndListensAreKeptThere() async throws {
        try await Harness.run(signIn: true, postgres: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let old = try await Self.newToken(client, session: rj.form)
            let token = try await Self.newToken(client, session: rj.form)
            #expect(try await Self.validate(client, token: old).json["valid"] as? Bool == false)
            #expect(try await Self.validate(client, token: token).json["user_name"] as? String == "RJ")
            let body = Self.payload("import", (0..<3).map { Self.listen(at: Self.now - 600 - Int64($0) * 300, track: "T\($0)") })
            #expect(try await Self.submit(client, token: old, body).status == .unauthorized)
            #expect(try await Self.submit(client, token: token, body).status == .ok)
            #expect(try await Self.submit(client, token: token, body).status == .ok)
            let chart = try await client.get("/api/u/RJ/chart?week=2023-07-08")
            #expect(chart.body.containsInOrder(["Received Artist", "Received Album", "\"plays\" : 3"]), "\(chart.body)")
        }
    }
}
