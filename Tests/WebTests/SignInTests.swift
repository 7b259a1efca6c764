import Crypto
import Foundation
import ListenIngest
import Workers
import HTTPServing
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresStore
import SQLiteStore
import Stores
import Sync
import Testing
import Web

/// Signing in with Last.fm's web authentication, end to end against the
/// fake Last.fm (its approval step, `auth.getSession` with the signature
/// checked), and what each account may see.
@Suite struct SignInTests {
    /// A browser that signed in: its session cookie, plus a CSRF cookie and token.
    struct Browser {
        var sessionCookie: String
        var csrf: Harness.Session = .init()
        var cookie: String { [sessionCookie, csrf.cookie].filter { !$0.isEmpty }.joined(separator: "; ") }
        var form: Harness.Session { Harness.Session(cookie: cookie, token: csrf.token) }
    }

    /// Every `Set-Cookie` of a response, by cookie name.
    static func setCookies(_ headers: HTTPFields) -> [String: String] {
        var all: [String: String] = [:]
        for line in headers[values: .setCookie] {
            let name = String(line.prefix { $0 != "=" })
            all[name] = line
        }
        return all
    }

    static func value(_ setCookie: String?) -> String? {
        setCookie.map { String($0.drop { $0 != "=" }.dropFirst().prefix { $0 != ";" }) }
    }

    /// `GET /signin`: the nonce in the callback Last.fm will be given, and
    /// the state cookie; checks where the browser is sent.
    static func startSignIn(_ client: some TestClientProtocol, base: String = "http://127.0.0.1:8080") async throws -> (nonce: String, stateCookie: String) {
        let start = try await client.execute(uri: "/signin", method: .get, headers: [:], body: nil)
        #expect(start.status == .found)
        let location = try #require(start.headers[.location])
        let url = try #require(URLComponents(string: location))
        #expect(url.path.hasSuffix("/api/auth/"))
        #expect(url.queryItems?.first { $0.name == "api_key" }?.value == "test-key")
        let callback = try #require(url.queryItems?.first { $0.name == "cb" }?.value)
        #expect(callback.hasPrefix(base + "/signin/return/"))
        let nonce = String(callback.dropFirst((base + "/signin/return/").count))
        let state = try #require(setCookies(start.headers)["vinylogue_signin"])
        #expect(state.contains("HttpOnly") && state.contains("SameSite=Lax") && state.contains("Path=/signin/return"))
        #expect(value(state) == nonce)
        return (nonce, "vinylogue_signin=\(nonce)")
    }

    /// The callback as Last.fm would send the browser to it.
    static func callback(_ client: some TestClientProtocol, nonce: String, token: String, cookie: String) async throws -> TestResponse {
        try await client.execute(uri: "/signin/return/\(nonce)?token=\(token)", method: .get,
                                 headers: cookie.isEmpty ? [:] : [.cookie: cookie], body: nil)
    }

    /// Signs in as `user` the whole way, optionally presenting an earlier session.
    static func signIn(_ client: some TestClientProtocol, _ harness: Harness, as user: String, presenting old: String? = nil) async throws -> Browser {
        let (nonce, state) = try await startSignIn(client)
        let approved = await harness.fake.approvedToken(for: user)
        let back = try await callback(client, nonce: nonce, token: approved, cookie: [state, old].compactMap { $0 }.joined(separator: "; "))
        #expect(back.status == .seeOther, "\(String(buffer: back.body))")
        #expect(back.headers[.location] == "/")
        let session = try #require(setCookies(back.headers)["vinylogue_session"])
        let token = try #require(Self.value(session))
        var browser = Browser(sessionCookie: "vinylogue_session=\(token)")
        // A CSRF cookie and token, from the users page, as a browser gets them.
        let home = try await client.execute(uri: "/", method: .get, headers: [.cookie: browser.sessionCookie], body: nil)
        if let csrf = Self.value(setCookies(home.headers)["vinylogue_csrf"]) {
            browser.csrf = Harness.Session(cookie: "vinylogue_csrf=\(csrf)", token: csrf)
        }
        return browser
    }

    static func page(_ client: some TestClientProtocol, _ uri: String, _ browser: Browser?) async throws -> (status: HTTPResponse.Status, body: String) {
        let response = try await client.execute(uri: uri, method: .get, headers: browser.map { [.cookie: $0.cookie] } ?? [:], body: nil)
        return (response.status, String(buffer: response.body))
    }

    @Test func signingInMakesAnAccountWhoseListIsThemAndTheirFriends() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let (nonce, state) = try await Self.startSignIn(client)
            let token = await harness.fake.approvedToken(for: "rj")
            let back = try await Self.callback(client, nonce: nonce, token: token, cookie: state)
            #expect(back.status == .seeOther)
            let cookies = Self.setCookies(back.headers)
            let session = try #require(cookies["vinylogue_session"])
            for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=2592000"] { #expect(session.contains(attribute), "\(session)") }
            #expect(!session.contains("Secure"), "plain http: no Secure")
            #expect(Self.value(cookies["vinylogue_signin"]) == "", "the state cookie is cleared")
            let browser = Browser(sessionCookie: "vinylogue_session=\(try #require(Self.value(session)))")

            let home = try await Self.page(client, "/", browser)
            #expect(home.status == .ok)
            #expect(home.body.contains("Signed in with Last.fm as <strong>RJ</strong>"))
            // Themselves first, as "me", then everyone they follow on Last.fm.
            #expect(home.body.containsInOrder(["data-user=\"RJ\"", "badge\">me", "data-user=\"demo\"", "data-user=\"hidden\"", "data-user=\"ybsc\""]))
            let json = try await Self.page(client, "/api/users", browser)
            #expect(json.body == #"{"users":[{"me":true,"name":"RJ"},{"me":false,"name":"demo"},{"me":false,"name":"hidden"},{"me":false,"name":"ybsc"}]}"#)

            // Last.fm's session key for the account stays on the server.
            let key = try #require(await harness.fake.sessionKeysGiven()["RJ"])
            for uri in ["/", "/settings", "/api/users", "/u/RJ"] {
                let response = try await client.execute(uri: uri, method: .get, headers: [.cookie: browser.cookie], body: nil)
                #expect(!String(buffer: response.body).contains(key) && !"\(response.headers)".contains(key), "\(uri)")
            }
            #expect(!"\(back.headers)".contains(key))
            let accounts = SQLiteAccountStore(harness.database)
            #expect(try await accounts.accountCount() == 1)
            #expect(try await accounts.sessionCount() == 1)
        }
    }

    @Test func visitorsSeeTheWayInAndPublicChartsButNoList() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let home = try await Self.page(client, "/", nil)
            #expect(home.status == .ok)
            #expect(home.body.contains("href=\"/signin\""))
            #expect(home.body.contains("Sign in with Last.fm"))
            #expect(!home.body.contains("class=\"users\""))
            // The household's list is nobody's here.
            try await harness.lists.add(try .init("ybsc"))
            #expect(!(try await Self.page(client, "/", nil)).body.contains("data-user=\"ybsc\""))

            let session = try await client.session(from: "/")
            let add = try await client.post("/users", ["username": "RJ"], session: session)
            #expect(add.status == .forbidden)
            #expect(add.body.contains("Sign in with Last.fm to keep your own list"))
            #expect(try await harness.lists.users().map(\.name) == ["ybsc"])
            let settings = try await Self.page(client, "/settings", nil)
            #expect(settings.status == .forbidden)
            #expect(settings.body.contains("Sign in with Last.fm to choose your own filter"))
            let api = try await Self.page(client, "/api/users", nil)
            #expect(api.status == .unauthorized)
            // Charts stay public, as they are on Last.fm.
            let chart = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(chart.status == .ok)
            #expect(chart.body.contains("Exposition I"))
        }
    }

    @Test func aForgedOrReplayedSignInStartsNoSession() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let accounts = SQLiteAccountStore(harness.database)
            // A token Last.fm never issued.
            var (nonce, state) = try await Self.startSignIn(client)
            let forged = try await Self.callback(client, nonce: nonce, token: "0123456789abcdef0123456789abcdef", cookie: state)
            #expect(forged.status == .badRequest)
            #expect(String(buffer: forged.body).contains("it has expired or was already used. Sign in again."))
            #expect(Self.setCookies(forged.headers)["vinylogue_session"] == nil)

            // A token nobody approved.
            (nonce, state) = try await Self.startSignIn(client)
            let unapproved = try await Self.callback(client, nonce: nonce, token: await harness.fake.unapprovedToken(), cookie: state)
            #expect(unapproved.status == .badRequest)
            #expect(String(buffer: unapproved.body).contains("access was not allowed"))

            // A real token in a link made by someone else (login CSRF): the
            // browser has no state cookie, or another one; Last.fm is never asked.
            await harness.fake.clearLog()
            let theirs = await harness.fake.approvedToken(for: "ybsc")
            (nonce, state) = try await Self.startSignIn(client)
            let noState = try await Self.callback(client, nonce: nonce, token: theirs, cookie: "")
            #expect(noState.status == .badRequest)
            #expect(String(buffer: noState.body).contains("not started from this browser"))
            let otherState = try await Self.callback(client, nonce: nonce, token: theirs, cookie: "vinylogue_signin=" + String(repeating: "a", count: 64))
            #expect(otherState.status == .badRequest)
            #expect(await harness.fake.requests().filter { $0.method == "auth.getsession" }.isEmpty)
            #expect(try await accounts.accountCount() == 0)
            #expect(try await accounts.sessionCount() == 0)

            // A token that worked once does not work twice.
            (nonce, state) = try await Self.startSignIn(client)
            let used = await harness.fake.approvedToken(for: "rj")
            #expect(try await Self.callback(client, nonce: nonce, token: used, cookie: state).status == .seeOther)
            let replay = try await Self.callback(client, nonce: nonce, token: used, cookie: state)
            #expect(replay.status == .badRequest)
            #expect(Self.setCookies(replay.headers)["vinylogue_session"] == nil)
            #expect(try await accounts.sessionCount() == 1)
        }
    }

    @Test func aTamperedExpiredOrSignedOutCookieIsAVisitor() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let browser = try await Self.signIn(client, harness, as: "RJ")
            #expect(try await Self.page(client, "/", browser).body.contains("as <strong>RJ</strong>"))
            var tampered = browser
            let last = tampered.sessionCookie.removeLast()
            tampered.sessionCookie.append(last == "0" ? "1" : "0")
            #expect(try await Self.page(client, "/", tampered).body.contains("href=\"/signin\""))
            #expect(try await Self.page(client, "/api/users", tampered).status == .unauthorized)

            // Signing out ends the session on the server, not just in the browser.
            let out = try await client.post("/signout", [:], session: browser.form)
            #expect(out.status == .seeOther)
            #expect(Self.value(Self.setCookies(out.headers)["vinylogue_session"]) == "")
            #expect(try await Self.page(client, "/", browser).body.contains("href=\"/signin\""))
            #expect(try await SQLiteAccountStore(harness.database).sessionCount() == 0)

            // Sessions end after 30 days.
            let again = try await Self.signIn(client, harness, as: "RJ")
            harness.clock.advance(days: 29.9)
            #expect(try await Self.page(client, "/", again).body.contains("as <strong>RJ</strong>"))
            harness.clock.advance(days: 0.2)
            #expect(try await Self.page(client, "/", again).body.contains("href=\"/signin\""))
        }
    }

    @Test func signingInAgainRotatesTheSession() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let first = try await Self.signIn(client, harness, as: "RJ")
            let second = try await Self.signIn(client, harness, as: "RJ", presenting: first.sessionCookie)
            #expect(second.sessionCookie != first.sessionCookie)
            #expect(try await Self.page(client, "/", first).body.contains("href=\"/signin\""))
            #expect(try await Self.page(client, "/", second).body.contains("as <strong>RJ</strong>"))
            #expect(try await SQLiteAccountStore(harness.database).sessionCount() == 1)
            #expect(try await SQLiteAccountStore(harness.database).accountCount() == 1)
        }
    }

    @Test func twoAccountsKeepTheirOwnListsSettingsAndPages() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await Self.signIn(client, harness, as: "RJ")
            let ybsc = try await Self.signIn(client, harness, as: "ybsc")
            // RJ hides albums played 4 times or fewer and drops a friend.
            #expect(try await client.post("/settings", ["filter": "4", "timezone": "UTC"], session: rj.form).status == .seeOther)
            #expect(try await client.post("/users/hidden/remove", [:], session: rj.form).status == .seeOther)

            let rjList = try await Self.page(client, "/api/users", rj).body
            let ybscList = try await Self.page(client, "/api/users", ybsc).body
            #expect(!rjList.contains("hidden"))
            #expect(ybscList.hasPrefix(#"{"users":[{"me":true,"name":"ybsc"}"#), "\(ybscList)")
            #expect(try await Self.page(client, "/settings", ybsc).body.contains("<option value=\"0\" selected>"))

            // One chart, three viewers: each page is made with its viewer's
            // settings, whichever was rendered (and kept) first.
            let week = "/u/ybsc/week/2020-07-08"
            let forRJ = try await Self.page(client, week, rj).body
            let forYbsc = try await Self.page(client, week, ybsc).body
            let forVisitor = try await Self.page(client, week, nil).body
            #expect(!forRJ.contains("Exposition I"))
            #expect(forYbsc.contains("Exposition I"))
            #expect(forVisitor.contains("Exposition I"))
            #expect(try await Self.page(client, week, rj).body == forRJ)
            // No page names who is looking.
            #expect(!forYbsc.contains("Signed in") && !forRJ.contains("Signed in"))
        }
    }

    @Test func behindHTTPSTheCookiesAreSecureAndTheCallbackUsesThePublicAddress() async throws {
        var server = ServerConfiguration()
        server.publicURL = "https://vinylogue.example/"
        try await Harness.run(signIn: true, server: server) { harness, client in
            let (nonce, state) = try await Self.startSignIn(client, base: "https://vinylogue.example")
            let back = try await Self.callback(client, nonce: nonce, token: await harness.fake.approvedToken(for: "RJ"), cookie: state)
            #expect(try #require(Self.setCookies(back.headers)["vinylogue_session"]).contains("Secure"))
        }
    }

    /// Used to fail: with `--port 0` the callback (and the feed's links)
    /// named port 0, which no browser can reach.
    @Test func onAnyFreePortTheCallbackNamesThePortBound() async throws {
        var server = ServerConfiguration()
        server.port = 0
        // The whole way over sockets: the app's, and the fake Last.fm's.
        try await Harness.run(signIn: true, server: server, testing: .live, fakes: .servers) { _, client in
            let port = try #require(client.port)
            _ = try await Self.startSignIn(client, base: "http://127.0.0.1:\(port)")
            let feed = try await client.get("/u/ybsc/feed.atom")
            #expect(feed.body.contains("href=\"http://127.0.0.1:\(port)/u/ybsc\""), "\(feed.body.prefix(600))")
        }
    }

    @Test func aWrongSecretIsTheOperatorsProblemToFix() async throws {
        try await Harness.run(signIn: true, secret: "not-the-secret") { harness, client in
            let (nonce, state) = try await Self.startSignIn(client)
            let back = try await Self.callback(client, nonce: nonce, token: await harness.fake.approvedToken(for: "RJ"), cookie: state)
            #expect(back.status == .badGateway)
            #expect(String(buffer: back.body).contains("The person running this Vinylogue needs to check its Last.fm API key and secret."))
            #expect(try await SQLiteAccountStore(harness.database).accountCount() == 0)
        }
    }

    /// With `--database`, accounts, sessions, lists and settings live in
    /// PostgreSQL (so every instance on it shares them), none in SQLite.
    @Test func onPostgreSQLEverythingPersonalIsKeptThere() async throws {
        try await Harness.run(signIn: true, postgres: true) { harness, client in
            let rj = try await Self.signIn(client, harness, as: "RJ")
            #expect(try await client.post("/settings", ["filter": "4", "timezone": "UTC"], session: rj.form).status == .seeOther)
            let home = try await Self.page(client, "/", rj)
            #expect(home.body.containsInOrder(["data-user=\"RJ\"", "data-user=\"demo\"", "data-user=\"hidden\"", "data-user=\"ybsc\""]))
            #expect(!(try await Self.page(client, "/u/ybsc/week/2020-07-08", rj)).body.contains("Exposition I"))

            let url = try #require(harness.databaseURL)
            try await PostgresDatabase.with(url: url) { database in
                let accounts = PostgresAccountStore(database)
                #expect(try await accounts.accountCount() == 1)
                #expect(try await accounts.sessionCount() == 1)
                let account = try #require(try await accounts.account(forSession: SignInSessionDigest.of(rj.sessionCookie), at: harness.clock.now))
                let list = PostgresListStore(database, owner: account.owner)
                #expect(try await list.users().map(\.name) == ["RJ", "demo", "hidden", "ybsc"])
                #expect(try await list.settings().filter.threshold == 4)
            }
            #expect(try await SQLiteAccountStore(harness.database).accountCount() == 0)
            let health = try await client.get("/healthz").body
            #expect(health.hasPrefix(#"{"database":"postgresql","#) && health.hasSuffix(#""status":"ok"}"#), "\(health)")
            #expect(try await harness.lists.owned(by: .account(1)).users().isEmpty)
        }
    }

    @Test func withoutASecretNobodySignsIn() async throws {
        try await Harness.run { _, client in
            #expect(try await client.execute(uri: "/signin", method: .get, headers: [:], body: nil).status == .notFound)
            let home = try await client.get("/")
            #expect(!home.body.contains("/signin"))
        }
    }
}

/// The digest the server stores for a session cookie's token.
enum SignInSessionDigest {
    static func of(_ cookie: String) -> String {
        let token = cookie.split(separator: "=", maxSplits: 1).last.map(String.init) ?? ""
        return SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
