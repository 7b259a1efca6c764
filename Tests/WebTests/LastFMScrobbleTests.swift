import Crypto
import Foundation
import ListenIngest
import Workers
import HTTPServing
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore
import Web

/// The Last.fm-compatible API (`/2.0/`): signing in with the listen token
/// as pylast does (`authToken = md5(username + md5(token))`) or with it as
/// the password, scrobbling batches in which bad scrobbles are ignored with
/// their codes, now playing, both answer shapes, every error code, sessions
/// tied to their token and owner, and the rate limit on both listen APIs.
@Suite struct LastFMScrobbleTests {
    typealias Listens = ListenSubmissionTests
    static let now = Listens.now

    static func md5(_ text: String) -> String { Insecure.MD5.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }

    static func encoded(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }
            .map { "\($0.key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }
            .joined(separator: "&")
    }

    /// A form-encoded POST to `/2.0/` (or a GET with the fields in the address).
    static func call(_ client: some TestClientProtocol, _ fields: [String: String], get: Bool = false,
                     query: [String: String] = [:]) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        let response: TestResponse
        if get {
            response = try await client.execute(uri: "/2.0/?" + encoded(fields.merging(query) { a, _ in a }), method: .get, headers: [:], body: nil)
        } else {
            let uri = query.isEmpty ? "/2.0/" : "/2.0/?" + encoded(query)
            response = try await client.execute(uri: uri, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                body: ByteBuffer(string: encoded(fields)))
        }
        return (response.status, String(buffer: response.body), response.headers)
    }

    static func json(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
    }

    /// The XML error code of a failed answer.
    static func errorCode(_ body: String) -> Int? {
        guard body.contains(#"<lfm status="failed">"#), let start = body.range(of: #"<error code=""#) else { return nil }
        return Int(body[start.upperBound...].prefix { $0.isNumber })
    }

    /// Signs `user` in with `token` as pylast does; returns the session key.
    static func signIn(_ client: some TestClientProtocol, _ user: String, token: String) async throws -> String {
        let answer = try await call(client, ["method": "auth.getMobileSession", "api_key": "any-key", "api_sig": "unchecked",
                                             "authToken": md5(user + md5(token))], query: ["username": user])
        #expect(answer.status == .ok, "\(answer.body)")
        #expect(answer.body.contains(#"<lfm status="ok"><session><name>"#), "\(answer.body)")
        let start = try #require(answer.body.range(of: "<key>"))
        let key = String(answer.body[start.upperBound...].prefix { $0 != "<" })
        #expect(key.count == 32 && key.allSatisfy(\.isHexDigit))
        return key
    }

    static func scrobbleFields(_ key: String, _ scrobbles: [[String: String]], json: Bool = false) -> [String: String] {
        var fields = ["method": "track.scrobble", "api_key": "k", "api_sig": "x", "sk": key]
        if json { fields["format"] = "json" }
        for (index, scrobble) in scrobbles.enumerated() {
            for (name, value) in scrobble { fields["\(name)[\(index)]"] = value }
        }
        return fields
    }

    static func scrobble(_ artist: String = "Scrobbled Artist", _ track: String, at instant: Int64, album: String = "Scrobbled Album") -> [String: String] {
        ["artist": artist, "track": track, "timestamp": String(instant), "album": album, "albumArtist": artist]
    }

    @Test func pylastsSignInThenAMixedBatchInXML() async throws {
        try await Harness.run { harness, client in
            let (token, browser) = try await Listens.householdToken(harness, client)
            let settings = try await client.get("/settings", session: browser)
            #expect(settings.body.contains("/2.0/</code> as their API address, <strong>listener</strong> as the user name"), "\(settings.body)")
            // The list's "me" is `listener`; the name is matched in any case.
            let key = try await Self.signIn(client, "Listener", token: token)
            let batch = [
                Self.scrobble("Scrobbled Artist", "One", at: Self.now - 3000),
                Self.scrobble("", "No Artist", at: Self.now - 2800),
                Self.scrobble("Scrobbled Artist", "Two", at: Self.now - 2600),
                Self.scrobble("Scrobbled Artist", "Too Old", at: 1_000_000_000),
                Self.scrobble("Scrobbled Artist", "  ", at: Self.now - 2400),
                Self.scrobble("Scrobbled Artist", "Too New", at: Self.now + 3600),
                Self.scrobble("Scrobbled Artist", "Three <&>", at: Self.now - 2200),
            ]
            let answer = try await Self.call(client, Self.scrobbleFields(key, batch))
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType]?.hasPrefix("text/xml") == true)
            #expect(answer.body.contains(#"<lfm status="ok"><scrobbles accepted="3" ignored="4">"#), "\(answer.body)")
            #expect(answer.body.containsInOrder([
                #"<track corrected="0">One</track><artist corrected="0">Scrobbled Artist</artist><album corrected="0">Scrobbled Album</album>"#,
                #"<timestamp>\#(Self.now - 3000)</timestamp><ignoredMessage code="0"></ignoredMessage>"#,
                #"<ignoredMessage code="1">Artist name must not be empty</ignoredMessage>"#,
                #"<ignoredMessage code="0">"#,
                #"<ignoredMessage code="3">"#, #"<ignoredMessage code="2">"#, #"<ignoredMessage code="4">"#,
                #"<track corrected="0">Three &lt;&amp;&gt;</track>"#, #"<ignoredMessage code="0">"#,
            ]), "\(answer.body)")
            #expect(try await Listens.stored(harness) == 3)
            let chart = try await client.get("/api/u/listener/chart?week=2023-07-08")
            #expect(chart.body.containsInOrder(["Scrobbled Artist", "Scrobbled Album", "\"plays\" : 3"]), "\(chart.body)")

            // The same batch again: duplicates, accepted as Last.fm does, not stored twice.
            #expect(try await Self.call(client, Self.scrobbleFields(key, batch)).body.contains(#"accepted="3" ignored="4""#))
            #expect(try await Listens.stored(harness) == 3)
        }
    }

    /// `albumArtist[i]` is kept with each scrobble, and the album counts
    /// for it; a blank one is none.
    @Test func theAlbumArtistAScrobblerSendsIsKeptAndCounted() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let key = try await Self.signIn(client, "listener", token: token)
            let batch = [
                ["artist": "Santana feat. Rob Thomas", "track": "Smooth", "timestamp": String(Self.now - 3000), "album": "Supernatural",
                 "albumArtist": "Santana"],
                ["artist": "Santana x The Product G&B", "track": "Maria Maria", "timestamp": String(Self.now - 2600), "album": "Supernatural",
                 "albumArtist": "Santana"],
                ["artist": "Santana", "track": "Put Your Lights On", "timestamp": String(Self.now - 2200), "album": "Supernatural",
                 "albumArtist": "  "],
            ]
            #expect(try await Self.call(client, Self.scrobbleFields(key, batch)).body.contains(#"accepted="3" ignored="0""#))
            let stored = try await SQLiteScrobbleStore(database: harness.database).scrobbles(of: try Username("listener"), from: Self.now - 3600, to: Self.now)
            #expect(stored.map { $0.albumArtist ?? "-" } == ["Santana", "Santana", "-"])
            let chart = try await client.get("/api/u/listener/chart?week=2023-07-08")
            #expect(chart.body.containsInOrder(["\"artist\" : \"Santana\"", "\"name\" : \"Supernatural\"", "\"plays\" : 3"]), "\(chart.body)")
        }
    }

    @Test func jsonShapesAreLastFMs() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            // The token itself as the password, as Last.fm's current getMobileSession takes it.
            let session = try await Self.call(client, ["method": "auth.getMobileSession", "username": "listener", "password": token, "format": "json"])
            #expect(session.status == .ok && session.headers[.contentType]?.hasPrefix("application/json") == true)
            let sessionObject = try #require(try Self.json(session.body)["session"] as? [String: Any])
            #expect(sessionObject["name"] as? String == "listener" && sessionObject["subscriber"] as? Int == 0)
            let key = try #require(sessionObject["key"] as? String)

            let one = try Self.json(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T", at: Self.now - 900)], json: true)).body)
            let scrobbles = try #require(one["scrobbles"] as? [String: Any])
            #expect((scrobbles["@attr"] as? [String: Any])?["accepted"] as? Int == 1)
            #expect((scrobbles["@attr"] as? [String: Any])?["ignored"] as? Int == 0)
            let single = try #require(scrobbles["scrobble"] as? [String: Any], "one scrobble is an object, as Last.fm answers")
            #expect((single["track"] as? [String: Any])?["#text"] as? String == "T")
            #expect((single["artist"] as? [String: Any])?["corrected"] as? String == "0")
            #expect(single["timestamp"] as? String == String(Self.now - 900))
            #expect((single["ignoredMessage"] as? [String: Any])?["code"] as? String == "0")

            let two = try Self.json(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T2", at: Self.now - 800),
                                                                                          Self.scrobble("A", "", at: Self.now - 700)], json: true)).body)
            let list = try #require((two["scrobbles"] as? [String: Any])?["scrobble"] as? [[String: Any]], "several are a list")
            #expect(list.count == 2)
            #expect((list[1]["ignoredMessage"] as? [String: Any])?["code"] as? String == "2")

            let playing = try await Self.call(client, ["method": "track.updateNowPlaying", "sk": key, "artist": "Now Artist", "track": "Now Track",
                                                       "duration": "200", "format": "json"])
            let nowPlaying = try #require(try Self.json(playing.body)["nowplaying"] as? [String: Any])
            #expect((nowPlaying["track"] as? [String: Any])?["#text"] as? String == "Now Track")
            #expect((nowPlaying["ignoredMessage"] as? [String: Any])?["code"] as? String == "0")
            #expect(try await Listens.stored(harness) == 2, "playing now is not a listen")

            let failed = try await Self.call(client, ["method": "track.scrobble", "sk": String(repeating: "0", count: 32), "format": "json"])
            #expect(failed.status == .forbidden)
            let error = try Self.json(failed.body)
            #expect(error["error"] as? Int == 9 && (error["message"] as? String)?.hasPrefix("Invalid session key") == true)
        }
    }

    @Test func nowPlayingInXMLAndByGET() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let key = try await Self.signIn(client, "listener", token: token)
            let playing = try await Self.call(client, ["method": "track.updateNowPlaying", "sk": key, "artist": "Now Artist", "track": "Now Track",
                                                       "album": "Now Album"], get: true)
            #expect(playing.status == .ok)
            #expect(playing.body.contains(#"<lfm status="ok"><nowplaying><track corrected="0">Now Track</track><artist corrected="0">Now Artist</artist><album corrected="0">Now Album</album>"#), "\(playing.body)")
            let noArtist = try await Self.call(client, ["method": "track.updateNowPlaying", "sk": key, "artist": " ", "track": "T"])
            #expect(noArtist.body.contains(#"<ignoredMessage code="1">"#))
            // A single scrobble without indices, by GET.
            let single = try await Self.call(client, ["method": "track.scrobble", "sk": key, "artist": "A", "track": "T", "timestamp": String(Self.now - 100)], get: true)
            #expect(single.body.contains(#"accepted="1" ignored="0""#), "\(single.body)")
            #expect(try await Listens.stored(harness) == 1)
        }
    }

    /// Every refusal, each with Last.fm's code, and nothing stored.
    @Test func everyErrorHasLastFMsCode() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let key = try await Self.signIn(client, "listener", token: token)
            let good = Self.scrobble("A", "T", at: Self.now - 600)
            var missingTimestamp = Self.scrobbleFields(key, [good, good])
            missingTimestamp["timestamp[1]"] = nil
            var badTimestamp = Self.scrobbleFields(key, [good])
            badTimestamp["timestamp[0]"] = "yesterday"
            var fiftyFirst = Self.scrobbleFields(key, [good])
            fiftyFirst["artist[50]"] = "A"
            let cases: [([String: String], HTTPResponse.Status, Int, String)] = [
                ([:], .badRequest, 3, "method"),
                (["method": "user.getLovedTracks"], .badRequest, 3, "auth.getMobileSession"),
                (["method": "auth.getMobileSession", "username": "listener"], .badRequest, 6, "authToken"),
                (["method": "auth.getMobileSession", "authToken": Self.md5("listener" + Self.md5(token))], .badRequest, 6, "username"),
                (["method": "auth.getMobileSession", "username": "listener", "authToken": Self.md5("listener" + Self.md5("wrong"))], .forbidden, 4, "password"),
                (["method": "auth.getMobileSession", "username": "someone", "authToken": Self.md5("someone" + Self.md5(token))], .forbidden, 4, "password"),
                (["method": "auth.getMobileSession", "username": "listener", "password": String(repeating: "ab", count: 32)], .forbidden, 4, "password"),
                (["method": "track.scrobble", "artist[0]": "A", "track[0]": "T", "timestamp[0]": "1688800000"], .forbidden, 9, "auth.getMobileSession"),
                (Self.scrobbleFields(String(repeating: "ab", count: 16), [good]), .forbidden, 9, "sign in again"),
                (Self.scrobbleFields("not-a-key", [good]), .forbidden, 9, "sign in again"),
                (["method": "track.updateNowPlaying", "artist": "A", "track": "T"], .forbidden, 9, "sk"),
                (Self.scrobbleFields(key, []), .badRequest, 6, "no scrobbles"),
                (missingTimestamp, .badRequest, 6, "timestamp[1] is required"),
                (badTimestamp, .badRequest, 6, "whole number"),
                (fiftyFirst, .badRequest, 6, "At most 50"),
                (["method": "track.updateNowPlaying", "sk": key, "artist": "A"], .badRequest, 6, "artist and track"),
            ]
            for (fields, status, code, words) in cases {
                let answer = try await Self.call(client, fields)
                #expect(answer.status == status, "\(fields): \(answer.body)")
                #expect(Self.errorCode(answer.body) == code, "\(fields): \(answer.body)")
                #expect(answer.body.contains(words), "\(fields): \(answer.body)")
                #expect(!answer.body.contains(token) && !answer.body.contains(key), "never echoes a secret")
            }
            #expect(try await Listens.stored(harness) == 0)
            // A body over the cap.
            let huge = try await client.execute(uri: "/2.0/", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                body: ByteBuffer(string: "method=track.scrobble&x=" + String(repeating: "a", count: 1 << 20)))
            #expect(Self.errorCode(String(buffer: huge.body)) == 6)
            // 413, as the same body announced by its length gets before it
            // is read (a chunked body reaches the handler): it was 400.
            #expect(huge.status == .contentTooLarge)
            #expect(String(buffer: huge.body).contains("send at most 50 scrobbles at a time"))
        }
    }

    /// A token made before this sign-in existed has no verifier: pylast's
    /// `authToken` is refused with what to do, the token as `password` works.
    @Test func aTokenWithoutAVerifierAsksForANewOne() async throws {
        try await Harness.run { harness, client in
            try await harness.lists.add(try Username(Listens.listener))
            let token = String(repeating: "5a", count: 32)
            let digest = SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
            try await SQLiteListenTokenStore(harness.database).replaceToken(of: .household, digest: digest, at: july2023)
            let refused = try await Self.call(client, ["method": "auth.getMobileSession", "username": "listener",
                                                       "authToken": Self.md5("listener" + Self.md5(token))])
            #expect(Self.errorCode(refused.body) == 4 && refused.body.contains("make a new token"), "\(refused.body)")
            let session = try await Self.call(client, ["method": "auth.getMobileSession", "username": "listener", "password": token])
            #expect(session.body.contains("<key>"), "\(session.body)")
        }
    }

    @Test func aHouseholdWithoutMeCannotSignIn() async throws {
        try await Harness.run { _, client in
            let token = try await Listens.newToken(client, session: try await client.session())
            let answer = try await Self.call(client, ["method": "auth.getMobileSession", "username": "listener", "password": token])
            #expect(Self.errorCode(answer.body) == 4 && answer.body.contains("add yourself"), "\(answer.body)")
        }
    }

    /// Sessions belong to their account: A's token signs in only A, B's new
    /// token leaves A's session working, A's new token ends it at once.
    @Test func sessionsAreTiedToTheirOwnerAndToken() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let rjToken = try await Listens.newToken(client, session: rj.form)
            let ybsc = try await SignInTests.signIn(client, harness, as: "ybsc")
            let ybscToken = try await Listens.newToken(client, session: ybsc.form)
            let rjKey = try await Self.signIn(client, "RJ", token: rjToken)
            let ybscKey = try await Self.signIn(client, "ybsc", token: ybscToken)

            // A's token does not sign in B, in either form.
            let crossed = try await Self.call(client, ["method": "auth.getMobileSession", "username": "ybsc", "authToken": Self.md5("ybsc" + Self.md5(rjToken))])
            #expect(Self.errorCode(crossed.body) == 4)
            let crossedPassword = try await Self.call(client, ["method": "auth.getMobileSession", "username": "ybsc", "password": rjToken])
            #expect(Self.errorCode(crossedPassword.body) == 4)

            // A session scrobbles for its owner whatever the request names.
            var fields = Self.scrobbleFields(rjKey, [Self.scrobble("A", "T", at: Self.now - 600)])
            fields["user"] = "ybsc"
            #expect(try await Self.call(client, fields).body.contains(#"accepted="1""#))
            #expect(try await Listens.stored(harness, "RJ") == 1)
            #expect(try await Listens.stored(harness, "ybsc") == 0)

            // B makes a new token: A's session works on, B's stops.
            _ = try await Listens.newToken(client, session: ybsc.form)
            #expect(try await Self.call(client, Self.scrobbleFields(rjKey, [Self.scrobble("A", "T2", at: Self.now - 500)])).body.contains(#"accepted="1""#))
            #expect(Self.errorCode(try await Self.call(client, Self.scrobbleFields(ybscKey, [Self.scrobble("A", "T", at: Self.now - 500)])).body) == 9)

            // A makes a new token: A's session stops at once; the old token no longer signs in; the new one does.
            let rjNew = try await Listens.newToken(client, session: rj.form)
            #expect(Self.errorCode(try await Self.call(client, Self.scrobbleFields(rjKey, [Self.scrobble("A", "T3", at: Self.now - 400)])).body) == 9)
            let old = try await Self.call(client, ["method": "auth.getMobileSession", "username": "RJ", "authToken": Self.md5("RJ" + Self.md5(rjToken))])
            #expect(Self.errorCode(old.body) == 4)
            let renewed = try await Self.signIn(client, "rj", token: rjNew)
            #expect(try await Self.call(client, Self.scrobbleFields(renewed, [Self.scrobble("A", "T3", at: Self.now - 400)])).body.contains(#"accepted="1""#))
            #expect(try await Listens.stored(harness, "RJ") == 3)
        }
    }

    @Test func onPostgreSQLSessionsAreKeptThere() async throws {
        try await Harness.run(signIn: true, postgres: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let token = try await Listens.newToken(client, session: rj.form)
            let key = try await Self.signIn(client, "RJ", token: token)
            #expect(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T", at: Self.now - 600)])).body.contains(#"accepted="1""#))
            _ = try await Listens.newToken(client, session: rj.form)
            #expect(Self.errorCode(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T", at: Self.now - 600)])).body) == 9)
            let chart = try await client.get("/api/u/RJ/chart?week=2023-07-08")
            #expect(chart.body.containsInOrder(["\"A\"", "\"plays\" : 1"]), "\(chart.body)")
        }
    }

    /// Past the limit a token gets ListenBrainz's 429 with its headers on
    /// `/1/`, a session Last.fm's error 29 on `/2.0/`; each credential is
    /// counted on its own; a new window (the clock moved) lets them in again.
    @Test func theRateLimitIsPerCredentialAndWindow() async throws {
        var server = ServerConfiguration(port: 0)
        server.listenRateLimit = 3
        try await Harness.run(server: server) { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let listen = { (n: Int64) in Listens.payload("single", [Listens.listen(at: Self.now - 600 - n * 300, track: "L\(n)")]) }
            for n in 0..<3 {
                let headers = try await client.execute(uri: "/1/submit-listens", method: .post, headers: [.authorization: "Token \(token)"],
                                                       body: ByteBuffer(string: listen(Int64(n)))).headers
                #expect(headers[HTTPField.Name("X-RateLimit-Limit")!] == "3")
                #expect(headers[HTTPField.Name("X-RateLimit-Remaining")!] == String(2 - n))
                #expect(headers[HTTPField.Name("X-RateLimit-Reset-In")!] == "10")
                #expect(headers[HTTPField.Name("X-RateLimit-Reset")!] == String(Self.now + 10))
            }
            let refused = try await client.execute(uri: "/1/submit-listens", method: .post, headers: [.authorization: "Token \(token)"],
                                                   body: ByteBuffer(string: listen(3)))
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[HTTPField.Name("X-RateLimit-Remaining")!] == "0")
            #expect(try Listens.object(refused.body)["code"] as? Int == 429)
            #expect(try await Listens.stored(harness) == 3)

            // The /2.0/ session is another credential, with its own count.
            let key = try await Self.signIn(client, "listener", token: token)
            for n in 0..<3 {
                #expect(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T\(n)", at: Self.now - 100 - Int64(n))])).status == .ok)
            }
            let limited = try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T9", at: Self.now - 50)]))
            #expect(limited.status == .tooManyRequests && Self.errorCode(limited.body) == 29, "\(limited.body)")
            #expect(try await Listens.stored(harness) == 6)

            harness.clock.advance(days: 10.0 / 86400)
            #expect(try await Self.call(client, Self.scrobbleFields(key, [Self.scrobble("A", "T10", at: Self.now - 40)])).status == .ok)
            let again = try await client.execute(uri: "/1/submit-listens", method: .post, headers: [.authorization: "Token \(token)"],
                                                 body: ByteBuffer(string: listen(3)))
            #expect(again.status == .ok && again.headers[HTTPField.Name("X-RateLimit-Remaining")!] == "2")
            #expect(try await Listens.stored(harness) == 8)
        }
    }
}

/// Issue 27's order: the same track at t, t+50 and t+100 sent one at a
/// time as t+50, t, t+100 (a player flushing its cache out of order) kept
/// one play where an import kept two. Through `/1/` and through `/2.0/`,
/// in that order, the archive now holds what the import holds.
@Suite struct ListenOrderRouteTests {
    typealias Listens = ListenSubmissionTests

    @Test func singlesOutOfOrderOnEitherAPIKeepWhatAnImportKeeps() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let t = Listens.now - 7200
            for offset: Int64 in [50, 0, 100] {
                let body = Listens.payload("single", [Listens.listen(at: t + offset, artist: "Low", track: "Sunflower", album: "Fire")])
                #expect(try await Listens.submit(client, token: token, body).status == .ok)
            }
            let store = SQLiteScrobbleStore(database: harness.database)
            let viaListenBrainz = try await store.scrobbles(of: try Username(Listens.listener), from: 0, to: .max).map(\.instant)
            #expect(viaListenBrainz == [t, t + 100])

            // The same three through /2.0/, for another track.
            let key = try await LastFMScrobbleTests.signIn(client, Listens.listener, token: token)
            for offset: Int64 in [50, 0, 100] {
                let fields = LastFMScrobbleTests.scrobbleFields(key, [LastFMScrobbleTests.scrobble("Low", "Laser Beam", at: t + offset)])
                #expect(try await LastFMScrobbleTests.call(client, fields).status == .ok)
            }
            let laser = try await store.scrobbles(of: try Username(Listens.listener), from: 0, to: .max).filter { $0.track == "Laser Beam" }
            #expect(laser.map(\.instant) == [t, t + 100])

            // An import of the three, in any order, keeps the same two.
            let imported = try Username("imported")
            let plays = [50, 100, 0].map { Scrobble(instant: t + Int64($0), artist: "Low", album: "Fire", track: "Sunflower") }
            _ = try await store.store(plays, of: imported, origin: .listenBrainz)
            #expect(try await store.scrobbles(of: imported, from: 0, to: .max).map(\.instant) == viaListenBrainz)
        }
    }
}
