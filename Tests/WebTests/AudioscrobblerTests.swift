import Foundation
import ListenIngest
import Workers
import HTTPServing
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLiteStore
import Testing
import VinylogueCore
import Web

/// The Audioscrobbler 1.2 protocol, as mpdscribble speaks it: the
/// handshake at the root address with `md5(md5(token) + time)`, now playing,
/// submissions of up to 50 (skipped ones not stored), and a protocol answer
/// for every bad request, with nothing stored and no 5xx.
@Suite struct AudioscrobblerTests {
    typealias Listens = ListenSubmissionTests
    static let now = Listens.now
    static let md5 = LastFMScrobbleTests.md5
    static let encoded = LastFMScrobbleTests.encoded

    static func lines(_ response: TestResponse) -> [String] {
        String(buffer: response.body).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    static func handshake(_ client: some TestClientProtocol, user: String = "listener", token: String, time: Int64 = now,
                          path: String = "/") async throws -> [String] {
        let query = encoded(["hs": "true", "p": "1.2", "c": "mdc", "v": "0.24", "u": user, "t": String(time), "a": md5(md5(token) + String(time))])
        let response = try await client.execute(uri: path + "?" + query, method: .get, headers: [:], body: nil)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
        return lines(response)
    }

    static func post(_ client: some TestClientProtocol, _ path: String, _ fields: [String: String]) async throws -> [String] {
        let response = try await client.execute(uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                body: ByteBuffer(string: encoded(fields)))
        #expect(response.status == .ok, "\(path)")
        return lines(response)
    }

    static func track(_ index: Int, _ track: String, at instant: Int64, rating: String = "", artist: String = "Mpd Artist") -> [String: String] {
        ["a[\(index)]": artist, "t[\(index)]": track, "i[\(index)]": String(instant), "o[\(index)]": "P", "r[\(index)]": rating,
         "l[\(index)]": "200", "b[\(index)]": "Mpd Album", "n[\(index)]": "1", "m[\(index)]": ""]
    }

    @Test func mpdscribblesHandshakeNowPlayingAndSubmissions() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let answer = try await Self.handshake(client, token: token)
            #expect(answer.count == 4 && answer[0] == "OK", "\(answer)")
            let session = answer[1]
            #expect(session.count == 32 && session.allSatisfy(\.isHexDigit))
            #expect(answer[2].hasSuffix("/audioscrobbler/nowplaying") && answer[3].hasSuffix("/audioscrobbler/submit"), "\(answer)")

            let playing = try await Self.post(client, "/audioscrobbler/nowplaying",
                                              ["s": session, "a": "Mpd Artist", "t": "Playing Now", "b": "Mpd Album", "l": "200", "n": "", "m": ""])
            #expect(playing == ["OK"])
            let page = try await client.get("/u/listener")
            #expect(page.body.contains("Playing Now"), "now playing is not on the chart page")

            var fields = ["s": session]
            fields.merge(Self.track(0, "First", at: Self.now - 600)) { a, _ in a }
            fields.merge(Self.track(1, "Skipped", at: Self.now - 400, rating: "S")) { a, _ in a }
            fields.merge(Self.track(2, "Second", at: Self.now - 200, rating: "L")) { a, _ in a }
            fields.merge(Self.track(3, "  ", at: Self.now - 100)) { a, _ in a }
            #expect(try await Self.post(client, "/audioscrobbler/submit", fields) == ["OK"])
            #expect(try await Listens.stored(harness) == 2)
            let kept = try await SQLiteScrobbleStore(database: harness.database).scrobbles(of: try Username("listener"), from: 0, to: .max)
            #expect(kept.map(\.track) == ["First", "Second"])
            #expect(kept.allSatisfy { $0.album == "Mpd Album" && $0.artist == "Mpd Artist" })
            let chart = try await client.get("/api/u/listener/chart?week=2023-07-08")
            #expect(chart.body.contains("Mpd Album"), "\(chart.body)")
            // Sent again (mpdscribble resends what it did not hear OK for): kept once.
            #expect(try await Self.post(client, "/audioscrobbler/submit", fields) == ["OK"])
            #expect(try await Listens.stored(harness) == 2)
            // The handshake at /audioscrobbler answers too.
            #expect(try await Self.handshake(client, token: token, time: Self.now + 1, path: "/audioscrobbler").first == "OK")
            // The users page is still the users page.
            #expect(try await client.get("/").body.contains("<html"))
        }
    }

    @Test func badHandshakesAndBadSubmissionsGetProtocolAnswersAndStoreNothing() async throws {
        try await Harness.run { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            #expect(try await Self.handshake(client, token: "not-the-token") == ["BADAUTH"])
            #expect(try await Self.handshake(client, user: "someone-else", token: token) == ["BADAUTH"])
            #expect(try await Self.handshake(client, token: token, time: Self.now - 3600) == ["BADTIME"])
            #expect(try await Self.handshake(client, token: token, time: Self.now + 3600) == ["BADTIME"])
            let session = try await Self.handshake(client, token: token, time: Self.now - 5)[1]
            // The same handshake again, overheard and replayed: refused.
            #expect(try await Self.handshake(client, token: token, time: Self.now - 5) == ["BADAUTH"])
            let noProtocol = try await client.execute(uri: "/?hs=true&p=1.1&u=listener&t=1&a=x", method: .get, headers: [:], body: nil)
            #expect(Self.lines(noProtocol).first?.hasPrefix("FAILED ") == true)

            #expect(try await Self.post(client, "/audioscrobbler/submit", Self.track(0, "X", at: Self.now).merging(["s": "0123456789abcdef0123456789abcdef"]) { a, _ in a })
                == ["BADSESSION"])
            #expect(try await Self.post(client, "/audioscrobbler/submit", Self.track(0, "X", at: Self.now)) == ["BADSESSION"])
            var fiftyOne = ["s": session]
            for index in 0..<51 { fiftyOne.merge(Self.track(index, "T\(index)", at: Self.now - Int64(index) * 300)) { a, _ in a } }
            #expect(try await Self.post(client, "/audioscrobbler/submit", fiftyOne).first?.hasPrefix("FAILED At most 50 tracks") == true)
            var missing = ["s": session]
            missing.merge(Self.track(0, "Kept?", at: Self.now - 300)) { a, _ in a }
            missing["a[1]"] = "No Track Or Time"
            #expect(try await Self.post(client, "/audioscrobbler/submit", missing) == ["FAILED Line 1 has no artist (a) or track (t)"])
            var badTime = ["s": session]
            badTime.merge(Self.track(0, "Bad Time", at: 0)) { a, _ in a }
            badTime["i[0]"] = "yesterday"
            #expect(try await Self.post(client, "/audioscrobbler/submit", badTime) == ["FAILED Line 0 has no time (i) in whole seconds since 1970"])
            var huge = ["s": session]
            huge.merge(Self.track(0, String(repeating: "x", count: 2_000), at: Self.now - 300)) { a, _ in a }
            #expect(try await Self.post(client, "/audioscrobbler/submit", huge) == ["OK"])
            let tooBig = try await client.execute(uri: "/audioscrobbler/submit", method: .post,
                                                  headers: [.contentType: "application/x-www-form-urlencoded"],
                                                  body: ByteBuffer(string: "s=\(session)&a[0]=" + String(repeating: "y", count: 1_100_000)))
            #expect(tooBig.status.code < 500)
            #expect(try await Listens.stored(harness) == 0)
            #expect(try await Self.post(client, "/audioscrobbler/nowplaying", ["s": session, "a": "", "t": "No Artist"]).first?.hasPrefix("FAILED") == true)
        }
    }

    /// Issue 38: 50 tracks with Japanese and Cyrillic names (about 20 KB
    /// percent-encoded) were refused with the web forms' 16 KiB limit
    /// before the route saw them; 1.2 takes what `/2.0/` takes.
    @Test func fiftyTracksOfLongNonLatinNamesAreStored() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { harness, client in
            let (token, _) = try await Listens.householdToken(harness, client)
            let session = try await Self.handshake(client, token: token)[1]
            var fields = ["s": session]
            for index in 0..<50 {
                let track = index.isMultiple(of: 2) ? "夜に駆ける（アコースティック・バージョン）第\(index)番" : "Группа крови на рукаве, часть \(index)"
                fields.merge(Self.track(index, track, at: Self.now - 3600 * 5 + Int64(index) * 300,
                                        artist: index.isMultiple(of: 2) ? "ヨルシカとYOASOBIの仲間たち" : "Кино и Виктор Цой")) { a, _ in a }
                fields["b[\(index)]"] = index.isMultiple(of: 2) ? "東京の夜の物語" : "Звезда по имени Солнце"
            }
            let body = Self.encoded(fields)
            #expect(body.utf8.count > 16_384 && body.utf8.count < 1 << 20, "\(body.utf8.count) bytes")
            #expect(try await Self.post(client, "/audioscrobbler/submit", fields) == ["OK"])
            #expect(try await Listens.stored(harness) == 50)
        }
    }
}
