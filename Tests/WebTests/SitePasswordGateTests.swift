import Foundation
import Workers
@testable import HTTPServing
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ListenIngest
import Logging
import NIOCore
import SQLiteStore
import Synchronization
import Testing
import VinylogueCore
@testable import Web

/// A site password keeps Last.fm's read methods at `/2.0/` as private as
/// the pages (issue 38: they answered anonymously), while players keep
/// scrobbling with their own tokens; and wrong passwords are slowed per
/// client address without locking the household out.
@Suite struct SitePasswordGateTests {
    static let password = "kitchen radio"
    static let right = SitePasswordTests.basic("me", password)
    static let wrong = SitePasswordTests.basic("me", "kitchen")

    static var server: ServerConfiguration {
        var server = ServerConfiguration()
        server.sitePassword = password
        return server
    }

    /// The household's listen token, made on Settings behind the password.
    static func listenToken(_ harness: Harness, _ client: some TestClientProtocol) async throws -> String {
        try await harness.lists.add(try Username(ListenSubmissionTests.listener))
        let settings = try await client.execute(uri: "/settings", method: .get, headers: [.authorization: right], body: nil)
        let cookie = String(try #require(settings.headers[.setCookie]).prefix { $0 != ";" })
        let csrf = String(cookie.split(separator: "=")[1])
        let page = try await client.execute(uri: "/settings/listen-token", method: .post,
                                            headers: [.authorization: right, .cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                                            body: ByteBuffer(string: "csrf=\(csrf)"))
        let body = String(buffer: page.body)
        let start = try #require(body.range(of: "<code class=\"listen-token\">"), "\(page.status) \(body)")
        return String(body[start.upperBound...].prefix(64))
    }

    static let readMethods = ["user.getInfo", "user.getRecentTracks", "user.getFriends", "user.getWeeklyAlbumChart", "user.getWeeklyArtistChart",
                              "user.getWeeklyTrackChart", "user.getWeeklyChartList", "album.getInfo"]

    @Test func theReadMethodsAskForThePasswordOrASessionKey() async throws {
        try await Harness.run(server: Self.server) { harness, client in
            _ = try await SQLiteScrobbleStore(database: harness.database).store(
                [Scrobble(instant: LastFMReadAPITests.week.from + 60, artist: "Low", album: "HEY WHAT", track: "White Horses")],
                of: try Username("listener"), origin: .received)
            for method in Self.readMethods {
                let fields = ["method": method, "user": "listener", "username": "listener", "artist": "Low", "album": "HEY WHAT", "api_key": "k"]
                for format in ["json", "xml"] {
                    let uri = "/2.0/?" + LastFMScrobbleTests.encoded(fields.merging(["format": format]) { a, _ in a })
                    for headers in [[:], [.authorization: Self.wrong]] as [HTTPFields] {
                        let refused = try await client.execute(uri: uri, method: .get, headers: headers, body: nil)
                        let said = String(buffer: refused.body)
                        #expect(refused.status == .unauthorized, "\(method) \(format): \(refused.status) \(said)")
                        #expect(refused.headers[.wwwAuthenticate] == "Basic realm=\"Vinylogue\", charset=\"UTF-8\"", "\(method)")
                        #expect(!said.contains("HEY WHAT") && !said.contains("White Horses"), "\(method): \(said)")
                        if format == "json" {
                            #expect(refused.headers[.contentType]?.hasPrefix("application/json") == true, "\(method)")
                            let json = try LastFMScrobbleTests.json(said)
                            #expect(json["error"] as? Int == 17, "\(method): \(said)")
                            #expect((json["message"] as? String)?.contains("password") == true, "\(said)")
                            #expect((json["message"] as? String)?.contains("session key") == true, "\(said)")
                        } else {
                            #expect(LastFMScrobbleTests.errorCode(said) == 17, "\(method): \(said)")
                            #expect(said.contains("password") && said.contains("session key"), "\(said)")
                        }
                    }
                    let allowed = try await client.execute(uri: uri, method: .get, headers: [.authorization: Self.right], body: nil)
                    #expect(allowed.status == .ok, "\(method) \(format): \(String(buffer: allowed.body))")
                }
                // Asked by POST, as pylast does.
                #expect(try await LastFMScrobbleTests.call(client, fields).status == .unauthorized, "\(method) by POST")
            }

            // A player's sign-in and scrobbles need no password (its token is
            // its credential), and its session key opens the read methods.
            let token = try await Self.listenToken(harness, client)
            let key = try await LastFMScrobbleTests.signIn(client, "listener", token: token)
            let scrobbled = try await LastFMScrobbleTests.call(client, LastFMScrobbleTests.scrobbleFields(key, [
                ["artist": "Low", "track": "Lies", "album": "Double Negative", "timestamp": String(ListenSubmissionTests.now - 600)],
            ]))
            #expect(scrobbled.status == .ok && scrobbled.body.contains(#"accepted="1""#), "\(scrobbled.body)")
            let playing = try await LastFMScrobbleTests.call(client, ["method": "track.updateNowPlaying", "api_key": "k", "sk": key, "artist": "Low",
                                                                      "track": "Lies"])
            #expect(playing.status == .ok, "\(playing.body)")
            let withKey = try await LastFMScrobbleTests.call(client, ["method": "user.getInfo", "user": "listener", "api_key": "k", "sk": key],
                                                             get: true)
            #expect(withKey.status == .ok && withKey.body.contains("<playcount>2</playcount>"), "\(withKey.body)")
            let madeUp = try await LastFMScrobbleTests.call(client, ["method": "user.getInfo", "user": "listener", "api_key": "k",
                                                                     "sk": String(repeating: "0", count: 32)], get: true)
            #expect(madeUp.status == .unauthorized, "\(madeUp.body)")
        }
    }

    // MARK: Wrong passwords

    static let addressField = HTTPField.Name("Vinylogue-Client-Address")!

    static func ask(_ client: some TestClientProtocol, from address: String, _ authorization: String?,
                    uri: String = "/") async throws -> TestResponse {
        var headers: HTTPFields = [Self.addressField: address]
        if let authorization { headers[.authorization] = authorization }
        return try await client.execute(uri: uri, method: .get, headers: headers, body: nil)
    }

    @Test func wrongPasswordsAreSlowedPerAddressWithoutLockingTheHouseholdOut() async throws {
        try await Harness.run(server: Self.server) { harness, client in
            let guesser = "192.0.2.7", household = "198.51.100.20"
            // A few mistakes are free.
            for _ in 1...5 { #expect(try await Self.ask(client, from: guesser, Self.wrong).status == .unauthorized) }
            // The sixth begins a delay of a second: until it passes, that
            // address is answered 429, even with the right password.
            #expect(try await Self.ask(client, from: guesser, Self.wrong).status == .unauthorized)
            let slowed = try await Self.ask(client, from: guesser, Self.right)
            #expect(slowed.status == .tooManyRequests)
            #expect(slowed.headers[.retryAfter] == "1")
            let sentence = String(buffer: slowed.body)
            #expect(sentence.contains("Too many wrong passwords") && sentence.contains("try again"), "\(sentence)")
            #expect(!sentence.contains(Self.password))
            // The listen APIs are not behind the password: not slowed either.
            #expect(try await Self.ask(client, from: guesser, nil, uri: "/healthz").status == .ok)
            // Another address is not slowed.
            #expect(try await Self.ask(client, from: household, Self.right).status == .ok)
            #expect(try await Self.ask(client, from: household, Self.wrong).status == .unauthorized)

            // Each further mistake doubles the delay, up to half a minute.
            var delays: [String] = []
            var wait = 1.0
            for _ in 0..<8 {
                harness.clock.advance(days: wait / 86400)
                #expect(try await Self.ask(client, from: guesser, Self.wrong).status == .unauthorized)
                let retry = try await Self.ask(client, from: guesser, Self.wrong).headers[.retryAfter]
                delays.append(retry ?? "none")
                wait = retry.flatMap(Double.init) ?? 30
            }
            #expect(delays == ["2", "4", "8", "16", "30", "30", "30", "30"], "\(delays)")
            // 300 quick guesses: none is checked while the delay runs.
            var checked = 0
            for _ in 0..<300 where try await Self.ask(client, from: guesser, Self.wrong).status == .unauthorized { checked += 1 }
            #expect(checked == 0)
            // Once the delay passes, the right password works, and the
            // mistakes are forgotten.
            harness.clock.advance(days: 30.0 / 86400)
            #expect(try await Self.ask(client, from: guesser, Self.right).status == .ok)
            for _ in 1...5 { #expect(try await Self.ask(client, from: guesser, Self.wrong).status == .unauthorized) }
            #expect(try await Self.ask(client, from: guesser, Self.right).status == .ok)

            // Mistakes long ago are forgotten too.
            for _ in 1...6 { _ = try await Self.ask(client, from: household, Self.wrong) }
            #expect(try await Self.ask(client, from: household, Self.wrong).status == .tooManyRequests)
            harness.clock.advance(days: 20.0 / 1440)
            for _ in 1...5 { #expect(try await Self.ask(client, from: household, Self.wrong).status == .unauthorized) }
        }
    }

    /// Guesses at the read API's password count as guesses at the pages'.
    @Test func theReadAPIsPasswordIsSlowedAlike() async throws {
        try await Harness.run(server: Self.server) { _, client in
            let uri = "/2.0/?method=user.getInfo&user=listener&api_key=k&format=json"
            for _ in 1...6 { #expect(try await Self.ask(client, from: "192.0.2.9", Self.wrong, uri: uri).status == .unauthorized) }
            let slowed = try await Self.ask(client, from: "192.0.2.9", Self.wrong, uri: uri)
            #expect(slowed.status == .tooManyRequests && slowed.headers[.retryAfter] == "1")
            let json = try LastFMScrobbleTests.json(String(buffer: slowed.body))
            #expect(json["error"] as? Int == 29, "\(json)")
            #expect(try await Self.ask(client, from: "192.0.2.9", Self.wrong, uri: "/u/demo").status == .tooManyRequests)
        }
    }

    /// The address is the connection's, whatever the request says of
    /// itself: six wrong passwords, each claiming another address, are six
    /// from one.
    @Test func aClientCannotChooseTheAddressItIsCountedUnder() async throws {
        var server = Self.server
        server.port = 0
        try await Harness.run(server: server, testing: .live) { _, client in
            for n in 1...6 {
                let answer = try await Self.ask(client, from: "203.0.113.\(n)", Self.wrong)
                #expect(answer.status == .unauthorized, "\(n)")
            }
            #expect(try await Self.ask(client, from: "203.0.113.99", Self.right).status == .tooManyRequests)
        }
    }

    @Test func addressesComeFromThePeerOrALocalProxy() {
        // A client's own X-Forwarded-For is its word alone.
        #expect(ClientAddress.of(peer: "192.0.2.1", forwardedFor: ["10.0.0.1"]) == "192.0.2.1")
        // From a proxy on this machine, the address it saw: the last one.
        #expect(ClientAddress.of(peer: "127.0.0.1", forwardedFor: ["10.0.0.1, 198.51.100.4"]) == "198.51.100.4")
        #expect(ClientAddress.of(peer: "::1", forwardedFor: ["10.0.0.1", "198.51.100.5"]) == "198.51.100.5")
        #expect(ClientAddress.of(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(ClientAddress.of(peer: nil, forwardedFor: []) == "local")
        // IPv6 by its /64: one household's, or one attacker's, whole.
        #expect(ClientAddress.key("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(ClientAddress.key("2001:0db8::1") == "2001:db8:0:0::/64")
        #expect(ClientAddress.key("192.0.2.1") == "192.0.2.1")
    }

    @Test func theAddressesRememberedAreBoundedAndADelayOutlastsAFlood() {
        let clock = TestClock(july2023)
        let attempts = PasswordAttempts(clock: clock.wallClock, capacity: 100)
        for _ in 1...6 { _ = attempts.failed("192.0.2.66") }
        for n in 0..<1_000 { _ = attempts.failed("10.0.\(n / 256).\(n % 256)") }
        #expect(attempts.tracked <= 100)
        #expect(attempts.delay(for: "192.0.2.66") != nil)
        #expect(attempts.delay(for: "10.0.0.1") == nil)
    }

    /// Each delay is logged as a warning that names the address, never
    /// what was sent.
    @Test func aDelayIsLoggedWithTheAddressAndNeverThePassword() {
        let lines = LogLines()
        let password = SitePassword(password: Self.password, clock: TestClock(july2023).wallClock,
                                    logger: Logger(label: "test") { _ in lines })
        let guess = SitePasswordTests.basic("me", "secret guess")
        let request = Request(head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/",
                                                headerFields: [.authorization: guess, ClientAddress.field: "192.0.2.44"]),
                              body: .init(buffer: ByteBuffer()))
        for _ in 1...6 { #expect(password.check(request) == .refused) }
        #expect(password.check(request) == .slowed(seconds: 1))
        let logged = lines.all
        #expect(logged.count == 1, "\(logged)")
        #expect(logged.first?.level == .warning)
        #expect(logged.first?.message.contains("192.0.2.44") == true, "\(logged)")
        #expect(logged.allSatisfy { !$0.message.contains("secret") && !$0.message.contains(guess) })
    }
}

/// A log handler that keeps what it is given, for a test to read.
final class LogLines: LogHandler, @unchecked Sendable {
    private let kept = Mutex<[(level: Logger.Level, message: String)]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var all: [(level: Logger.Level, message: String)] { kept.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        kept.withLock { $0.append((event.level, event.message.description)) }
    }
}
