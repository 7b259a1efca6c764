import Foundation
import ListenIngest
import Workers
import HTTPServing
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import ListenBrainzTestServer
import PostgresStore
import Stores
import TestSupport
import Testing
import VinylogueApp
import VinylogueCore
import Web

/// Who sees a person's listening: every route that shows a person, asked
/// by an anonymous visitor, a signed-in stranger, a friend (each has the
/// other on their list) and the owner, on SQLite and on PostgreSQL. A
/// person hidden from a viewer answers exactly as a name Last.fm does not
/// know: same status, same headers, same bytes.
@Suite struct VisibilityTests {
    /// Every route that shows a person, as Vera's.
    static let routes = [
        "/u/Vera", "/u/Vera/week/2022-07-08", "/u/Vera?years_ago=2", "/u/Vera/history", "/u/Vera/rediscover",
        "/u/Vera/album/Hidden%20Artist/Hidden%20Album", "/u/Vera/card.png", "/u/Vera/history/card.png",
        "/u/Vera/week/2022-07-08/card.png", "/u/Vera/album/Hidden%20Artist/Hidden%20Album/card.png",
        "/u/Vera/feed.atom", "/u/Vera/cover/Hidden%20Artist/Hidden%20Album", "/u/vera",
        "/api/u/Vera/chart", "/api/u/Vera/chart?week=2022-07-08", "/api/u/Vera/history",
        "/u/Vera/widget", "/u/Vera/widget.png", "/u/Vera/widget.svg?years_ago=2", "/u/Vera/year/2022", "/api/u/Vera/year/2022",
        "/u/Vera/year/2022/card.png",
    ]

    /// An answer as a viewer sees it, less what differs by the moment.
    struct Answer: Equatable, CustomStringConvertible {
        let status: HTTPResponse.Status
        let headers: [String]
        let body: ByteBuffer

        init(_ response: TestResponse) {
            status = response.status
            headers = response.headers.filter { ![.date, .setCookie].contains($0.name) }.map { "\($0.name): \($0.value)" }.sorted()
            body = response.body
        }

        var description: String { "\(status) \(headers) \(String(buffer: body).prefix(300))" }
    }

    /// A viewer: the cookies its browser sends.
    struct Viewer {
        let name: String
        let cookie: String
    }

    static func answer(_ client: some TestClientProtocol, _ uri: String, as viewer: Viewer) async throws -> Answer {
        Answer(try await client.execute(uri: uri, method: .get, headers: [.cookie: viewer.cookie], body: nil))
    }

    static func answers(_ client: some TestClientProtocol, as viewer: Viewer) async throws -> [String: Answer] {
        var all: [String: Answer] = [:]
        for route in routes { all[route] = try await answer(client, route, as: viewer) }
        return all
    }

    /// Signs `user` in through the fake's approval, as `SignInTests.signIn` does.
    static func signIn(_ client: some TestClientProtocol, _ fake: FakeLastFM, as user: String) async throws -> SignInTests.Browser {
        let (nonce, state) = try await SignInTests.startSignIn(client)
        let back = try await SignInTests.callback(client, nonce: nonce, token: await fake.approvedToken(for: user), cookie: state)
        let session = try #require(SignInTests.value(SignInTests.setCookies(back.headers)["vinylogue_session"]))
        var browser = SignInTests.Browser(sessionCookie: "vinylogue_session=\(session)")
        let home = try await client.execute(uri: "/", method: .get, headers: [.cookie: browser.sessionCookie], body: nil)
        let csrf = try #require(SignInTests.value(SignInTests.setCookies(home.headers)["vinylogue_csrf"]))
        browser.csrf = Harness.Session(cookie: "vinylogue_csrf=\(csrf)", token: csrf)
        return browser
    }

    static func choose(_ client: some TestClientProtocol, _ visibility: Visibility, _ browser: SignInTests.Browser) async throws {
        let saved = try await client.post("/settings/visibility", ["visibility": visibility.rawValue], session: browser.form)
        #expect(saved.status == .seeOther)
        #expect(saved.headers[.location] == "/settings?visibility=saved#visibility")
    }

    @Test(arguments: [false, true]) func everyRouteAnswersOnlyThoseThePersonChose(postgres: Bool) async throws {
        try await Harness.run(signIn: true, postgres: postgres) { harness, client in
            for name in ["Mika", "Noor"] { await harness.fake.add(user: name, .generated(DemoHistory(seed: 40 + UInt64(name.count), start: 1_136_073_600))) }
            // Vera is not on Last.fm yet: what every viewer gets for a name nobody knows.
            let anonymous = Viewer(name: "anonymous", cookie: try await client.session(from: "/").cookie)
            let noorBrowser = try await SignInTests.signIn(client, harness, as: "Noor")
            let mikaBrowser = try await SignInTests.signIn(client, harness, as: "Mika")
            let noor = Viewer(name: "stranger", cookie: noorBrowser.cookie), mika = Viewer(name: "friend", cookie: mikaBrowser.cookie)
            var unknown: [String: [String: Answer]] = [:]
            for viewer in [anonymous, noor, mika] { unknown[viewer.name] = try await Self.answers(client, as: viewer) }
            #expect(unknown["anonymous"]?["/u/Vera"]?.status == .notFound, "\(unknown["anonymous"]?["/u/Vera"].map(String.init(describing:)) ?? "")")
            #expect(unknown["stranger"]?["/api/u/Vera/chart"]?.status == .notFound)

            // Vera joins Last.fm and signs in here; a player sends her listens a year ago.
            await harness.fake.add(user: "Vera", .generated(DemoHistory(seed: 31, start: 1_136_073_600)))
            let veraBrowser = try await SignInTests.signIn(client, harness, as: "Vera")
            let vera = Viewer(name: "owner", cookie: veraBrowser.cookie)
            let token = try await ListenSubmissionTests.newToken(client, session: veraBrowser.form)
            let yearAgo = ListenSubmissionTests.now - 365 * 86_400
            let listens = (0..<3).map { ListenSubmissionTests.listen(at: yearAgo + Int64($0) * 300, artist: "Hidden Artist", track: "T\($0)",
                                                                     album: "Hidden Album") }
            #expect(try await ListenSubmissionTests.submit(client, token: token, ListenSubmissionTests.payload("import", listens)).status == .ok)
            // Friends both ways: Mika and Vera list each other; Noor lists Vera, who does not list Noor
            // (her sign-in listed her Last.fm friends, Noor among them).
            #expect(try await client.post("/users/Noor/remove", [:], session: veraBrowser.form).status == .seeOther)
            for (browser, name) in [(mikaBrowser, "Vera"), (veraBrowser, "Mika"), (noorBrowser, "Vera")] {
                let added = try await client.post("/users", ["username": name], session: browser.form)
                #expect(added.status == .seeOther, "\(added.body)")
            }

            // Public: everyone sees her archive, and the pages are kept.
            for viewer in [anonymous, noor, mika, vera] {
                let page = try await Self.answer(client, "/u/Vera", as: viewer)
                #expect(page.status == .ok && String(buffer: page.body).contains("Hidden Album"), "\(viewer.name): \(page)")
                #expect(try await Self.answer(client, "/api/u/Vera/chart", as: viewer).status == .ok)
                let widget = try await Self.answer(client, "/u/Vera/widget", as: viewer)
                #expect(widget.status == .ok && String(buffer: widget.body).contains("Hidden Album"), "\(viewer.name): \(widget)")
            }

            // Friends: Mika and Vera see everything; Noor and the anonymous visitor get the unknown name's answers.
            try await Self.choose(client, .friends, veraBrowser)
            for viewer in [mika, vera] {
                let page = try await Self.answer(client, "/u/Vera", as: viewer)
                #expect(page.status == .ok && String(buffer: page.body).contains("Hidden Album"), "\(viewer.name): \(page)")
                #expect(page.headers.contains("Cache-Control: private, no-cache"))
                #expect(try await Self.answer(client, "/api/u/Vera/history", as: viewer).status == .ok)
            }
            for viewer in [anonymous, noor] {
                for (route, answer) in try await Self.answers(client, as: viewer) {
                    #expect(answer == unknown[viewer.name]?[route], "\(viewer.name) \(route): \(answer) ≠ \(unknown[viewer.name]?[route].map(String.init(describing:)) ?? "nothing")")
                }
            }
            // On Noor's everyone page Vera is a name Last.fm does not know; on Mika's, her chart.
            let noorsEveryone = String(buffer: try await Self.answer(client, "/everyone", as: noor).body)
            #expect(noorsEveryone.contains("The user “Vera” was not found") && !noorsEveryone.contains("Hidden Album"), "\(noorsEveryone)")
            let mikasEveryone = String(buffer: try await Self.answer(client, "/everyone", as: mika).body)
            #expect(mikasEveryone.contains("Hidden Album"))

            // Only me: Mika too gets the unknown name's answers; Vera still sees hers.
            try await Self.choose(client, .onlyMe, veraBrowser)
            for (route, answer) in try await Self.answers(client, as: mika) {
                #expect(answer == unknown["friend"]?[route], "friend \(route): \(answer)")
            }
            let own = try await Self.answer(client, "/u/Vera", as: vera)
            #expect(own.status == .ok && String(buffer: own.body).contains("Hidden Album"))
            let settings = try await SignInTests.page(client, "/settings", veraBrowser)
            #expect(settings.body.contains("value=\"only-me\" checked"))

            // Mika removing Vera from the list ends the friendship the moment Vera chooses friends again.
            try await Self.choose(client, .friends, veraBrowser)
            #expect(try await Self.answer(client, "/u/Vera", as: mika).status == .ok)
            #expect(try await client.post("/users/Vera/remove", [:], session: mikaBrowser.form).status == .seeOther)
            #expect(try await Self.answer(client, "/u/Vera", as: mika) == unknown["friend"]?["/u/Vera"])

            // Everyone again: the stranger sees her at once.
            try await Self.choose(client, .everyone, veraBrowser)
            #expect(try await Self.answer(client, "/u/Vera", as: noor).status == .ok)
            #expect(try await Self.answer(client, "/u/Vera", as: anonymous).status == .ok)
        }
    }

    @Test func aChoiceNeedsAnAccountAndTheFormsToken() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let visitor = try await client.session(from: "/")
            let refused = try await client.post("/settings/visibility", ["visibility": "only-me"], session: visitor)
            #expect(refused.status == .unauthorized || refused.status == .forbidden, "\(refused.status)")
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let forged = try await client.execute(uri: "/settings/visibility", method: .post,
                                                  headers: [.cookie: rj.cookie, .contentType: "application/x-www-form-urlencoded"],
                                                  body: ByteBuffer(string: "visibility=only-me"))
            #expect(forged.status == .forbidden)
            let odd = try await client.post("/settings/visibility", ["visibility": "nobody"], session: rj.form)
            #expect(odd.headers[.location] == "/settings?visibility=unknown#visibility")
            #expect(try await client.get("/u/RJ").status == .ok)
        }
    }
}

/// A choice made on one instance of a fleet holds on every other at once:
/// the other instance's kept page of the person is never served past it.
@Suite(.timeLimit(.minutes(1))) struct FleetVisibilityTests {
    /// Whether `condition` came true within 10 s, asked every 20 ms (the
    /// other instance applies a notice when PostgreSQL delivers it).
    static func within10s(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func aChoiceOnOneInstanceHidesThePersonOnTheOther() async throws {
        let cluster = try TestCluster.url()
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        await fake.add(user: "Vera", .generated(DemoHistory(seed: 31, start: 1_136_073_600)))
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { databaseURL in
            func configuration(_ name: String) -> VinylogueConfiguration {
                var configuration = VinylogueConfiguration(environment: [:])
                configuration.dataDirectory = Harness.scratch.appendingPathComponent("vinylogue-fleet-visibility-\(name)-\(UUID().uuidString)")
                configuration.databaseURL = databaseURL
                configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: "http://fake-lastfm.invalid/2.0/", requestsPerSecond: 200,
                                                           maxAttempts: 1, timeout: .seconds(10))
                configuration.lastFM.apiSecret = "test-secret"
                configuration.lastFM.authURL = "http://fake-lastfm.invalid/api/auth/"
                configuration.imageBase = "http://fake-lastfm.invalid/i/u/"
                configuration.copiesHistories = false
                return configuration
            }
            let first = configuration("a"), second = configuration("b")
            defer {
                try? FileManager.default.removeItem(at: first.dataDirectory)
                try? FileManager.default.removeItem(at: second.dataDirectory)
            }
            let transports = Transports(lastFM: .inProcess(fake), images: .inProcess(fake), listenBrainz: .inProcess(FakeListenBrainz(clock: clock.wallClock)))
            try await Composition.with(first, clock: clock.wallClock, transports: transports) { one in
                try await Composition.with(second, clock: clock.wallClock, transports: transports) { two in
                    let appOne = try await one.buildApplication(), appTwo = try await two.buildApplication()
                    try await appOne.test(.router) { a in
                        try await appTwo.test(.router) { b in
                            let vera = try await VisibilityTests.signIn(a, fake, as: "Vera")
                            let token = try await ListenSubmissionTests.newToken(a, session: vera.form)
                            let listen = ListenSubmissionTests.listen(at: ListenSubmissionTests.now - 365 * 86_400, artist: "Hidden Artist",
                                                                      album: "Hidden Album")
                            #expect(try await ListenSubmissionTests.submit(a, token: token, ListenSubmissionTests.payload("single", [listen])).status == .ok)
                            // Instance B keeps Vera's page for anyone.
                            for _ in 0..<2 {
                                let page = try await b.get("/u/Vera")
                                #expect(page.status == .ok && page.body.contains("Hidden Album"), "\(page.body.prefix(300))")
                            }
                            let kept = try await b.getOnce("/api/u/Vera/chart")
                            #expect(kept.status == .ok)

                            // Vera keeps it to herself on instance A; B hears it and never serves its kept page again.
                            try await VisibilityTests.choose(a, .onlyMe, vera)
                            #expect(try await Self.within10s { try await b.getOnce("/u/Vera").status == .notFound }, "B never heard A's notice")
                            let hidden = try await b.getOnce("/u/Vera")
                            #expect(hidden.body.contains("The user “Vera” was not found") && !hidden.body.contains("Hidden Album"))
                            #expect(try await b.getOnce("/api/u/Vera/chart").status == .notFound)
                            // Her session works on B, where she sees her own page.
                            let own = try await b.execute(uri: "/u/Vera", method: .get, headers: [.cookie: vera.cookie], body: nil)
                            #expect(own.status == .ok && String(buffer: own.body).contains("Hidden Album"))

                            try await VisibilityTests.choose(a, .everyone, vera)
                            #expect(try await Self.within10s { try await b.getOnce("/u/Vera").status == .ok }, "B never heard A's notice")
                        }
                    }
                }
            }
        }
    }
}

/// A household's instance kept to itself with one password: every page asks
/// for it; players and the operator's health checks are not asked.
@Suite struct SitePasswordTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test func everyPageAsksForThePasswordAndPlayersAreNotAsked() async throws {
        var server = ServerConfiguration()
        server.sitePassword = "kitchen radio"
        try await Harness.run(demo: true, server: server) { _, client in
            // Each wrong password from an address of its own: more than a
            // few from one are slowed (`SitePasswordGateTests`).
            for (n, uri) in ["/", "/u/demo", "/api/u/demo/chart", "/u/demo/feed.atom", "/settings", "/everyone", "/u/demo/card.png"].enumerated() {
                let refused = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
                #expect(refused.status == .unauthorized, "\(uri)")
                #expect(refused.headers[.wwwAuthenticate] == "Basic realm=\"Vinylogue\", charset=\"UTF-8\"")
                #expect(String(buffer: refused.body).contains("This Vinylogue is private"))
                #expect(!String(buffer: refused.body).contains("demo’s"))
                let wrong = try await client.execute(uri: uri, method: .get, headers: [.authorization: Self.basic("me", "kitchen"),
                                                                                        HTTPField.Name("Vinylogue-Client-Address")!: "192.0.2.\(n)"],
                                                     body: nil)
                #expect(wrong.status == .unauthorized, "\(uri)")
            }
            for user in ["", "anyone"] {
                let page = try await client.execute(uri: "/u/demo", method: .get, headers: [.authorization: Self.basic(user, "kitchen radio")], body: nil)
                #expect(page.status == .ok)
            }
            #expect(try await client.execute(uri: "/healthz", method: .get, headers: [:], body: nil).status == .ok)
            // A player's token is its own credential.
            let validate = try await client.execute(uri: "/1/validate-token", method: .get, headers: [.authorization: "Token 0123"], body: nil)
            #expect(validate.status != .unauthorized || validate.headers[.wwwAuthenticate] == nil)
            #expect(String(buffer: validate.body).contains("valid"))
            let garbage = try await client.execute(uri: "/", method: .get, headers: [.authorization: "Basic %%%"], body: nil)
            #expect(garbage.status == .unauthorized)
        }
    }
}
