import Foundation
import Hummingbird
import HummingbirdTesting
import ListenBrainzTestServer
import SQLiteStore
import Stores
import Testing
import VinylogueCore

/// `lb:` users in the web app: added from the form (checked with the local
/// ListenBrainz), synced into the archive on their first view while the
/// page says so, then charted from the archive like anyone archived.
@Suite struct ListenBrainzUserTests {
    /// erin's history: the two years before the harness's July 2023.
    static let history = DemoHistory(seed: 53, start: 1_625_400_000)

    static func weekChart(_ day: Int64) -> WeeklyChart {
        let week = LastFMWeekCalendar.week(containing: day)
        return ScrobbleTally.chart(.album, user: try! Username("lb:erin"), week: week, scrobbles: history.scrobbles(in: week))
    }

    @Test func aListenBrainzUserIsAddedSyncedOnFirstViewAndCharted() async throws {
        // Over HTTP, as `serve` reaches ListenBrainz.
        try await Harness.run(fakes: .servers) { harness, client in
            await harness.listenBrainz.add(user: "erin", history: Self.history)
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "LB:Erin"], session: session)
            #expect(added.status == .seeOther, "\(added.body)")
            #expect(try await harness.lists.users().map(\.name).contains("lb:erin"))
            // Confirmed with ListenBrainz, not Last.fm.
            #expect(await harness.fake.requests().isEmpty)

            // The first view starts the copy and says so (ListenBrainz's
            // first answer is held, so the page cannot overtake it).
            await harness.listenBrainz.inject(.init(.held, endpoint: "listens", times: 1))
            let first = try await client.getOnce("/u/lb:erin/week/2022-07-06")
            #expect(first.status == .accepted)
            #expect(first.body.contains("Vinylogue is copying lb:erin"), "\(first.body)")
            #expect(first.body.contains("Reload in a minute."))
            await harness.listenBrainz.untilHolding(1)
            await harness.listenBrainz.releaseHeld()
            await harness.idle()

            let page = try await client.get("/u/lb:erin/week/2022-07-06")
            #expect(page.status == .ok, "\(page.body)")
            let chart = Self.weekChart(1_657_108_800)
            #expect(!chart.entries.isEmpty)
            #expect(page.body.containsInOrder(chart.entries.prefix(3).map { escaped($0.name) }))
            #expect(page.body.contains("\(chart.entries[0].plays) plays"))

            let api = try await client.get("/api/u/lb:erin/chart?week=2022-07-06")
            #expect(api.status == .ok)
            #expect(api.body.contains("\"plays\" : \(chart.entries[0].plays)"))
            #expect(try await client.get("/u/lb:erin/history").status == .ok)
            #expect(try await client.get("/u/lb:erin?years_ago=1").status == .ok)

            // The album page: the archive's life, Last.fm's details without a user.
            let top = chart.entries[0]
            let album = try await client.get("/u/lb:erin/album/\(pathSegment(top.artist))/\(pathSegment(top.name))?week=2022-07-06")
            #expect(album.status == .ok, "\(album.body)")
            let asked = await harness.fake.requests().filter { $0.method == "album.getinfo" }
            #expect(asked.allSatisfy { $0.parameters["username"] == nil })

            // Another casing is sent to the one address.
            let other = try await client.getOnce("/u/LB:Erin/week/2022-07-06")
            #expect(other.status == .found)
            #expect(other.headers[.location] == "/u/lb:erin/week/2022-07-06")

            // Only ListenBrainz was asked for erin's listens, by her own name.
            let listens = await harness.listenBrainz.requests().filter { $0.endpoint == "listens" }
            #expect(!listens.isEmpty && listens.allSatisfy { $0.user?.lowercased() == "erin" })

            // Listed like anyone: the list page links to her, and she can be removed.
            #expect(try await client.get("/").body.contains("href=\"/u/lb:erin\""))
            let removed = try await client.post("/users/lb:erin/remove", [:], session: session)
            #expect(removed.status == .seeOther)
            #expect(try await !harness.lists.users().map(\.name).contains("lb:erin"))
        }
    }

    /// An `lb:` user's copy runs as their durable job: while another
    /// process holds it (a terminal `sync`, another instance), a view says
    /// the copy is running and starts none alongside; once it is free, a
    /// later view copies them.
    @Test func aCopyAnotherProcessHoldsIsNotStartedAlongside() async throws {
        try await Harness.run { harness, client in
            await harness.listenBrainz.add(user: "erin", history: Self.history)
            let erin = try Username("lb:erin")
            let copies = SQLiteHistoryCopyStore(harness.database)
            let elsewhere = try #require(try await copies.claim(erin, at: harness.clock.now, lease: 3600))
            let first = try await client.getOnce("/u/lb:erin/week/2022-07-06")
            #expect(first.status == .accepted)
            #expect(first.body.contains("Vinylogue is copying lb:erin"), "\(first.body)")
            await harness.idle()
            // Only the name's check (one listen) was asked; no window of a copy.
            let asked = await harness.listenBrainz.requests()
            #expect(asked.allSatisfy { $0.endpoint == "listens" && $0.query["count"] == "1" }, "\(asked.map(\.query))")
            #expect(try await copies.copy(of: erin)?.state == .copying)

            #expect(try await copies.finish(elsewhere, failure: "stopped", at: harness.clock.now))
            harness.clock.advance(days: 301.0 / 86_400)
            _ = try await client.getOnce("/u/lb:erin/week/2022-07-06")
            await harness.idle()
            let page = try await client.get("/u/lb:erin/week/2022-07-06")
            #expect(page.status == .ok, "\(page.body)")
            #expect(try await copies.copy(of: erin)?.state == .done)
        }
    }

    @Test func anUnknownListenBrainzUserIsASentenceOnTheFormAndThePage() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let refused = try await client.post("/users", ["username": "lb:nobody"], session: session)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.body.contains("ListenBrainz has no user “nobody”."), "\(refused.body)")
            let invalid = try await client.post("/users", ["username": "lb:no way"], session: session)
            #expect(invalid.status == .unprocessableContent)
            #expect(invalid.body.contains("ListenBrainz names after “lb:” contain only letters"), "\(invalid.body)")

            _ = try await client.getOnce("/u/lb:nobody")
            await harness.idle()
            let page = try await client.getOnce("/u/lb:nobody")
            #expect(page.status == .notFound)
            #expect(page.body.contains("ListenBrainz has no user “nobody”."), "\(page.body)")
            // An lb: name never reaches Last.fm.
            #expect(await harness.fake.requests().isEmpty)
        }
    }

    @Test func aListenBrainzThatIsDownIsSaidOnThePage() async throws {
        try await Harness.run { harness, client in
            await harness.listenBrainz.add(user: "erin", history: Self.history)
            await harness.listenBrainz.inject(.init(.httpStatus(503), endpoint: "listens"))
            _ = try await client.getOnce("/u/lb:erin")
            await harness.idle()
            let page = try await client.getOnce("/u/lb:erin")
            #expect(page.status == .badGateway)
            #expect(page.body.contains("ListenBrainz is temporarily unavailable (HTTP 503)."), "\(page.body)")
        }
    }
}

/// An album or artist name as a path segment.
private func pathSegment(_ s: String) -> String {
    s.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? s
}

/// Text as Mustache writes it into HTML.
private func escaped(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
}
