import Foundation
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import Testing
import VinylogueCore

/// `/everyone`: this week N years ago for everyone on the list, side by side.
@Suite struct EveryoneTests {
    /// The cards of the page, by the user each is for.
    func cards(_ body: String) -> [String: String] {
        var found: [String: String] = [:]
        for part in body.components(separatedBy: "<li class=\"person\" data-user=\"").dropFirst() {
            let name = String(part.prefix { $0 != "\"" })
            found[name] = String(part[..<(part.range(of: "</li>")?.lowerBound ?? part.endIndex)])
        }
        return found
    }

    @Test func eachPersonsNumberOneAlbumAndAFailingPersonsSentence() async throws {
        try await Harness.run(demo: true) { harness, client in
            for name in ["demo", "ybsc", "hidden"] { _ = try await harness.lists.add(try Username(name)) }
            let page = try await client.get("/everyone?years_ago=3")
            #expect(page.status == .ok)
            #expect(page.body.contains("3 years ago"))
            let cards = cards(page.body)
            // The demo lists its own five first.
            #expect(cards.keys.sorted() == ["demo", "felix", "hidden", "june", "mara", "theo", "ybsc"])
            // The list's order.
            #expect(page.body.containsInOrder(["data-user=\"demo\"", "data-user=\"ybsc\"", "data-user=\"hidden\""]))

            // ybsc's captured week: PUP first with 22 plays.
            let ybsc = try #require(cards["ybsc"])
            #expect(ybsc.containsInOrder(["#1", "Live at The Electric Ballroom", "PUP", "22 plays"]))
            #expect(ybsc.contains("href=\"/u/ybsc?years_ago=3\""))
            #expect(ybsc.components(separatedBy: "<img ").count == 5)  // four covers

            // The demo's #1 is the tally of its own scrobbles that week.
            let target = ChartWeekFinder(timeZone: .current).target(yearsAgo: 3, from: july2023)
            let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
            let top = try #require(ScrobbleTally.chart(.album, user: DemoHistory.username, week: week,
                                                       scrobbles: DemoHistory().scrobbles(in: week)).entries.first)
            let demo = try #require(cards["demo"])
            #expect(demo.containsInOrder(["#1", top.name.escapedForHTML, top.artist.escapedForHTML, WeekLabels.plays(top.plays)]))
            #expect(demo.contains("href=\"/u/demo?years_ago=3\""))

            // A private profile fails on its own card, with a sentence; the others still show.
            let hidden = try #require(cards["hidden"])
            #expect(hidden.contains("role=\"alert\""))
            #expect(hidden.contains("listening history is private on Last.fm."))
            #expect(!hidden.contains("#1"))

            // Year navigation.
            #expect(page.body.contains("href=\"/everyone?years_ago=4\" rel=\"prev\""))
            #expect(page.body.contains("href=\"/everyone?years_ago=2\" rel=\"next\""))
            let one = try await client.get("/everyone")
            #expect(one.body.contains("1 year ago"))
            #expect(one.body.contains("href=\"/everyone?years_ago=2\" rel=\"prev\""))
            #expect(one.body.contains("<span class=\"year next\" aria-disabled=\"true\">"))
            #expect(try await client.get("/everyone?years_ago=0").status == .badRequest)
            #expect(try await client.get("/everyone?years_ago=x").status == .badRequest)
        }
    }

    @Test func theFilterSettingApplies() async throws {
        try await Harness.run { harness, client in
            _ = try await harness.lists.add(try Username("ybsc"))
            let session = try await client.session()
            _ = try await client.post("/settings", ["filter": "32", "timezone": "UTC"], session: session)
            let page = try await client.get("/everyone?years_ago=3")
            let ybsc = try #require(cards(page.body)["ybsc"])
            #expect(ybsc.contains("No albums played more than 32 plays that week."))
            #expect(!ybsc.contains("<img "))
        }
    }

    @Test func anEmptyListSaysHowToFillIt() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/everyone")
            #expect(page.status == .ok)
            #expect(page.body.contains("Nobody is on your list yet."))
            #expect(page.body.contains("href=\"/\">Add people to your list</a>"))
            // The users page and the bar lead here.
            let users = try await client.get("/")
            #expect(users.body.contains("href=\"/everyone\""))
        }
    }

    @Test func visitorsWhoHaveNotSignedInAreAskedTo() async throws {
        try await Harness.run(signIn: true) { _, client in
            let page = try await client.get("/everyone")
            #expect(page.status == .forbidden)
            #expect(page.body.contains("Sign in with Last.fm to see everyone on your list."))
        }
    }

    /// Signed in, the page is the account's own list, in its order (as
    /// `/api/users` gives it to that account): RJ's for RJ, ybsc's for ybsc.
    @Test func aSignedInAccountSeesItsOwnList() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try await SignInTests.signIn(client, harness, as: "RJ")
            let ybsc = try await SignInTests.signIn(client, harness, as: "ybsc")
            #expect(try await client.post("/users/hidden/remove", [:], session: rj.form).status == .seeOther)
            for browser in [rj, ybsc] {
                let list = try await SignInTests.page(client, "/api/users", browser).body
                let json = try #require(try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [String: [[String: Any]]])
                let names = try #require(json["users"]).compactMap { $0["name"] as? String }
                let page = try await SignInTests.page(client, "/everyone?years_ago=3", browser)
                #expect(page.status == .ok)
                #expect(page.body.containsInOrder(names.map { "<li class=\"person\" data-user=\"\($0)\"" }))
                #expect(cards(page.body).count == names.count)
            }
            // Each account's own first: RJ never sees ybsc's page, nor the friend RJ removed.
            let forRJ = try await SignInTests.page(client, "/everyone?years_ago=3", rj)
            #expect(forRJ.body.contains("data-user=\"RJ\"") && cards(forRJ.body)["hidden"] == nil)
            let forYbsc = try await SignInTests.page(client, "/everyone?years_ago=3", ybsc)
            #expect(try #require(cards(forYbsc.body)["ybsc"]).contains("Live at The Electric Ballroom"))
        }
    }

    /// The charts are loaded side by side, never more than six at a time:
    /// with every chart list held back, six requests reach Last.fm at once
    /// (one after another, only the first would), and a seventh only once
    /// one of them is answered.
    @Test(.timeLimit(.minutes(2))) func chartsAreLoadedConcurrentlyAndBounded() async throws {
        try await Harness.run(patience: .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10))) { harness, client in
            let names = ["ybsc", "RJ", "demo"] + (1...5).map { "listener\($0)" }
            for (index, name) in names.enumerated() {
                if name.hasPrefix("listener") {
                    await harness.fake.add(user: name, .generated(DemoHistory(seed: UInt64(100 + index), start: 1_293_969_600)))
                }
                _ = try await harness.lists.add(try Username(name))
            }
            // Every chart list is held until let go one at a time: a seventh
            // is asked only once one of six is answered, so never more than
            // six are held at once (events, not a wait for a request that
            // must not come).
            await harness.fake.inject(.init(.held, method: "user.getweeklychartlist"))
            async let page = client.get("/everyone?years_ago=3")
            func listsAsked() async -> Int { await harness.fake.requests().filter { $0.method == "user.getweeklychartlist" }.count }
            await harness.fake.untilHolding(6)
            #expect(await listsAsked() == 6)
            await harness.fake.releaseFirstHeld()
            await harness.fake.untilHolding(6)
            // The seventh came after the first answer; the eighth waits for the next.
            #expect(await listsAsked() == 7)
            await harness.fake.releaseFirstHeld()
            await harness.fake.untilHolding(6)
            #expect(await listsAsked() == 8)
            await harness.fake.clearFaults()
            await harness.fake.releaseHeld()
            #expect(await harness.fake.mostHeldAtOnce() == 6)
            let answered = try await page
            #expect(answered.status == .ok)
            #expect(Set(cards(answered.body).keys) == Set(names))
            #expect(cards(answered.body).values.allSatisfy { $0.contains("#1") })
            #expect(await harness.fake.requests().filter { $0.method == "user.getweeklychartlist" }.count == 8)
        }
    }
}
