import Foundation
import ListenIngest
import Workers
import HTTPServing
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore
import Web

@Suite struct UsersTests {
    @Test func firstRunOnboardsAndExplainsTheKey() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/")
            #expect(page.status == .ok)
            #expect(page.body.contains("Your Last.fm username"))
            #expect(!page.body.contains("No Last.fm API key is configured"))  // the harness has one
        }
    }

    @Test func addingValidatesAndKeepsLastFMsCasing() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "YBSC"], session: session)
            #expect(added.status == .seeOther)
            #expect(added.headers[.location] == "/")
            let users = try await harness.lists.users()
            #expect(users.map(\.name) == ["ybsc"])
            #expect(users.first?.isMe == true)
            let again = try await client.post("/users", ["username": "ybsc"], session: session)
            #expect(again.status == .seeOther)
            #expect(try await harness.lists.users().count == 1)
            let unknown = try await client.post("/users", ["username": "nosuchuser"], session: session)
            #expect(unknown.status == .unprocessableContent)
            #expect(unknown.body.contains("There is no Last.fm user called “nosuchuser”. Check the spelling."))
            #expect(unknown.body.contains("value=\"nosuchuser\""))
            let invalid = try await client.post("/users", ["username": "no way"], session: session)
            #expect(invalid.status == .unprocessableContent)
            #expect(invalid.body.contains("contain only letters"))
            // No upstream call for a name that cannot exist.
            #expect(await !harness.fake.requests().contains { $0.parameters["user"] == "no way" })
        }
    }

    @Test func formsWithoutTheTokenAreRefused() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let forged = try await client.post("/users", ["username": "ybsc"], session: session, token: String(repeating: "a", count: 64))
            #expect(forged.status == .forbidden)
            let noCookie = try await client.post("/users", ["username": "ybsc"], session: Session(cookie: "", token: session.token))
            #expect(noCookie.status == .forbidden)
            let crossSite = try await client.execute(uri: "/users", method: .post,
                                                     headers: [.cookie: session.cookie, .origin: "https://evil.example",
                                                               .contentType: "application/x-www-form-urlencoded"],
                                                     body: ByteBuffer(string: "username=ybsc&csrf=\(session.token)"))
            #expect(crossSite.status == .forbidden)
            #expect(try await harness.lists.users().isEmpty)
        }
    }

    @Test func oversizedFormsAreRefused() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let response = try await client.post("/users", ["username": String(repeating: "x", count: 100_000)], session: session)
            #expect(response.status == .contentTooLarge)
            #expect(try await harness.lists.users().isEmpty)
        }
    }

    @Test func reorderMoveRenameAndRemove() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            for name in ["ybsc", "rj", "demo"] { _ = try await client.post("/users", ["username": name], session: session) }
            #expect(try await harness.lists.users().map(\.name) == ["ybsc", "RJ", "demo"])
            _ = try await client.post("/users/demo/move", ["direction": "up"], session: session)
            #expect(try await harness.lists.users().map(\.name) == ["ybsc", "demo", "RJ"])
            let reordered = try await client.post("/users/reorder", ["order": "rj,ybsc,demo"], session: session)
            #expect(reordered.status == .noContent)
            #expect(try await harness.lists.users().map(\.name) == ["RJ", "ybsc", "demo"])
            _ = try await client.post("/users/demo/rename", ["username": "hidden"], session: session)
            #expect(try await harness.lists.users().map(\.name) == ["RJ", "ybsc", "hidden"])
            _ = try await client.post("/users/ybsc/remove", [:], session: session)
            let left = try await harness.lists.users()
            #expect(left.map(\.name) == ["RJ", "hidden"])
            #expect(left.map(\.position) == [0, 1])
            #expect(left.contains { $0.isMe })  // "me" moves on when me is removed
            let page = try await client.get("/", session: session)
            #expect(page.body.containsInOrder(["RJ", "hidden"]))
        }
    }

    @Test func importingFriendsAddsOnlyNewOnesInOrder() async throws {
        try await Harness.run { harness, client in
            await harness.fake.add(user: "roguewolves", .scripted(weeks: [], albums: []))
            let session = try await client.session()
            _ = try await client.post("/users", ["username": "ybsc"], session: session)
            _ = try await client.post("/users", ["username": "roguewolves"], session: session)
            let imported = try await client.post("/friends/import", [:], session: session)
            #expect(imported.status == .seeOther)
            #expect(imported.headers[.location] == "/?imported=15")
            let users = try await harness.lists.users()
            #expect(users.count == 17)
            #expect(users.prefix(3).map(\.name) == ["ybsc", "roguewolves", "heyimtaka0121"])
            let again = try await client.post("/friends/import", [:], session: session)
            #expect(again.headers[.location] == "/?imported=0")
            let page = try await client.get("/?imported=0", session: session)
            #expect(page.body.contains("Everyone you follow on Last.fm is already listed."))
        }
    }

    @Test func theDemoIsServedWithoutNetwork() async throws {
        try await Harness.run(demo: true) { harness, client in
            let page = try await client.get("/u/demo?years_ago=3")
            #expect(page.status == .ok)
            #expect(page.body.contains("3 years ago"))
            #expect(page.body.contains("class=\"row\""))
            #expect(await harness.fake.requests().isEmpty)
        }
    }
}

@Suite struct OtherPagesTests {
    @Test func albumPageShowsPlaysDescriptionAndLink() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc/album/Paramore/Paramore?week=2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.contains("17 plays"))  // that week
            #expect(page.body.contains("235 plays"))  // all time
            #expect(page.body.contains("511,055"))
            #expect(page.body.contains("self-titled fourth studio album"))
            #expect(!page.body.contains("Read more on Last.fm"))
            #expect(page.body.contains("href=\"https://www.last.fm/music/Paramore/Paramore\""))
            #expect(page.body.contains("href=\"/u/ybsc/week/2020-07-08\""))
        }
    }

    @Test func albumNamesWithSlashesAndUnicodeRoundTrip() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc/album/AC%2FDC/Back%20in%20Black%20%E2%80%94%20%C3%A9dition")
            #expect(page.status == .ok)
            #expect(page.body.contains("Back in Black — édition"))
            #expect(page.body.contains("AC/DC"))
        }
    }

    @Test func settingsValidate() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let bad = try await client.post("/settings", ["filter": "7", "timezone": "UTC"], session: session)
            #expect(bad.status == .unprocessableContent)
            let badZone = try await client.post("/settings", ["filter": "2", "timezone": "Mars/Olympus"], session: session)
            #expect(badZone.status == .unprocessableContent)
            #expect(badZone.body.contains("is not a time zone"))
            let good = try await client.post("/settings", ["filter": "2", "timezone": "Europe/Berlin"], session: session)
            #expect(good.status == .seeOther)
            let settings = try await harness.lists.settings()
            #expect(settings.filter.threshold == 2 && settings.timeZoneIdentifier == "Europe/Berlin")
            let page = try await client.get("/settings?saved=1", session: session)
            #expect(page.body.contains("Settings saved."))
            #expect(page.body.contains("<option value=\"2\" selected>"))
        }
    }

    /// Used to glue "http://" to the request's Host header, which anyone
    /// can set: the feed's links now use the configured public address.
    @Test func feedLinksUseTheConfiguredPublicAddress() async throws {
        var server = ServerConfiguration()
        server.publicURL = "https://vinylogue.example/"
        try await Harness.run(server: server) { harness, client in
            harness.clock.advance(days: -730)
            let feed = try await client.get("/u/ybsc/feed.atom")
            #expect(feed.body.contains("<link href=\"https://vinylogue.example/u/ybsc/week/2020-07-06\""), "\(feed.body.prefix(600))")
            #expect(feed.body.contains("https://vinylogue.example/u/ybsc/feed.atom"))
            #expect(!feed.body.contains("localhost"))
        }
    }

    @Test func feedIsAtomWithAnEntryPerRecentWeek() async throws {
        try await Harness.run { harness, client in
            // 8 July 2021: the newest entry is the captured week, one year back.
            harness.clock.advance(days: -730)
            let feed = try await client.get("/u/ybsc/feed.atom")
            #expect(feed.status == .ok)
            #expect(feed.headers[.contentType]?.hasPrefix("application/atom+xml") == true)
            #expect(feed.body.hasPrefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"))
            #expect(feed.body.contains("1. PUP – Live at The Electric Ballroom (22 plays)"))
            #expect(feed.body.components(separatedBy: "<entry>").count - 1 == 4)
            #expect(feed.body.contains("<title>ybsc, one year ago: Week 28 · Jul 5 – 12, 2020</title>"))
            // Any number of years back: from 8 July 2023, three years.
            harness.clock.advance(days: 730)
            let three = try await client.get("/u/ybsc/feed.atom?years_ago=3")
            #expect(three.body.contains("<title>ybsc, 3 years ago: Week 28 · Jul 5 – 12, 2020</title>"))
            #expect(three.body.contains("<title>Vinylogue: ybsc, this week 3 years ago</title>"))
            #expect(three.body.contains("/u/ybsc/feed.atom?years_ago=3"))
            #expect(try await client.get("/u/ybsc/feed.atom?years_ago=0").status == .badRequest)
        }
    }

    /// HEAD used to be 404 on every GET route.
    @Test func headAnswersEveryGetRouteWithoutABody() async throws {
        try await Harness.run(demo: true) { _, client in
            for uri in ["/healthz", "/", "/static/vinylogue.css", "/u/demo", "/u/demo/feed.atom", "/settings"] {
                let get = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
                let head = try await client.execute(uri: uri, method: .head, headers: [:], body: nil)
                #expect(head.status == get.status, "\(uri)")
                #expect(get.status == .ok, "\(uri)")
                #expect(head.body.readableBytes == 0, "\(uri)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "\(uri)")
            }
        }
    }

    @Test func healthAndAssets() async throws {
        try await Harness.run { harness, client in
            let health = try await client.get("/healthz")
            #expect(health.status == .ok)
            #expect(health.body.hasPrefix(#"{"database":"sqlite","#) && health.body.hasSuffix(#""status":"ok"}"#), "\(health.body)")
            let css = try await client.get("/static/vinylogue.css")
            #expect(css.status == .ok)
            #expect(css.headers[.cacheControl]?.contains("immutable") == true)
            let none = try await client.get("/api/users")
            #expect(none.headers[.contentType] == "application/json; charset=utf-8")
            #expect(none.body == #"{"users":[]}"#)
            let session = try await client.session()
            for name in ["ybsc", "rj"] { _ = try await client.post("/users", ["username": name], session: session) }
            #expect(try await harness.lists.users().count == 2)
            let users = try await client.get("/api/users")
            #expect(users.body == #"{"users":[{"me":true,"name":"ybsc"},{"me":false,"name":"RJ"}]}"#)
        }
    }
}
