import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VinylogueCore

/// `serve --demo`: the demo user and its four friends on every page, with
/// no Last.fm at all; and without `--demo`, none of them.
@Suite struct DemoHouseholdRouteTests {
    static let household = DemoHousehold()
    static let friends = ["theo", "mara", "felix", "june"]

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// The addresses in `body`'s `attribute`s (`href`, `src`) that start with `prefix`.
    static func links(_ body: String, startingWith prefix: String, in attribute: String = "href") -> [String] {
        body.components(separatedBy: "\(attribute)=\"\(prefix)").dropFirst().map { prefix + String($0.prefix { $0 != "\"" }) }
    }

    /// A newcomer's walk through every page of every demo person: all of
    /// it answered from the demo, never from Last.fm.
    @Test func everyPageOfEveryoneIsServedWithoutLastFM() async throws {
        try await Harness.run(demo: true) { harness, client in
            let users = try await client.get("/")
            #expect(users.status == .ok)
            #expect(users.body.containsInOrder(["data-user=\"demo\"", "data-user=\"theo\"", "data-user=\"mara\"", "data-user=\"felix\"",
                                                "data-user=\"june\""]))
            #expect(try await harness.lists.users().map(\.name) == ["demo", "theo", "mara", "felix", "june"])
            #expect(try await harness.lists.users().filter(\.isMe).map(\.name) == ["demo"])

            let everyone = try await client.get("/everyone?years_ago=3")
            #expect(everyone.status == .ok)
            for name in ["demo"] + Self.friends {
                let card = everyone.body.components(separatedBy: "data-user=\"\(name)\"").dropFirst().first ?? ""
                let cardBody = String(card[..<(card.range(of: "</li>")?.lowerBound ?? card.endIndex)])
                #expect(cardBody.contains("#1"), "\(name)'s card: \(cardBody)")
                #expect(cardBody.components(separatedBy: "<img ").count == 5, "\(name) has four covers")
            }

            for name in Self.friends {
                let chart = try await client.get("/u/\(name)?years_ago=2")
                #expect(chart.status == .ok, "\(name)")
                #expect(chart.body.contains("class=\"row\""), "\(name)")
                // No service knows the demo's people: their name links to no profile.
                #expect(chart.body.contains("<h1><span class=\"username\">\(name)</span></h1>"), "\(name)")
                #expect(try await client.get("/u/\(name)/history").status == .ok)
                #expect(try await client.get("/u/\(name)/rediscover").status == .ok)
                let feed = try await client.get("/u/\(name)/feed.atom")
                #expect(feed.status == .ok && feed.body.contains("<entry>"), "\(name)")
                let card = try await client.getOnce("/u/\(name)/card.png?years_ago=2")
                #expect(card.status == .ok && card.headers[.contentType] == "image/png", "\(name)")

                // Its top album: a page with the album's life and a generated cover.
                let album = try #require(Self.links(chart.body, startingWith: "/u/\(name)/album/").first)
                let page = try await client.get(album.replacingOccurrences(of: "&amp;", with: "&"))
                #expect(page.status == .ok, "\(album)")
                #expect(page.body.contains("In \(name)’s listening"), "\(album)")
                #expect(page.body.contains("/theme/"), "\(album) is coloured by its art")
                let cover = try #require(Self.links(chart.body, startingWith: "/u/\(name)/cover/", in: "src").first)
                let redirect = try await client.getOnce(cover.replacingOccurrences(of: "&amp;", with: "&"))
                let art = try #require(redirect.headers[.location])
                #expect(art.hasPrefix("/art/demo/"), "\(cover) → \(art)")
                let image = try await client.getOnce(art)
                #expect(image.status == .ok && image.headers[.contentType] == "image/png")
            }
            let asked = await harness.fake.requests().map(\.method)
            #expect(asked.isEmpty, "asked Last.fm: \(asked)")
            #expect(await harness.fake.imagesServed().isEmpty)
        }
    }

    /// felix's album of seven years: the first thing rediscover offers, with
    /// a life of plays in every year from 2014 to 2021 and none since.
    @Test func felixsRepeatedAlbumHasALifeAndIsRediscovered() async throws {
        let felix = try #require(Self.household.member(try Username("felix")))
        let album = try #require(felix.history.repeatedAlbum)
        try await Harness.run(demo: true) { _, client in
            let rediscover = try await client.get("/u/felix/rediscover")
            #expect(rediscover.status == .ok)
            let first = rediscover.body.components(separatedBy: "<li class=\"row\">").dropFirst().first ?? ""
            #expect(first.contains(">\(album.artist.escapedForHTML)</span>"), "the first find: \(first)")
            #expect(first.contains(">\(album.name.escapedForHTML)</span>"), "the first find: \(first)")

            let page = try await client.get("/u/felix/album/\(Self.segment(album.artist))/\(Self.segment(album.name))")
            #expect(page.status == .ok)
            #expect(page.body.contains("In felix’s listening"))
            for year in 2015...2021 {
                let row = page.body.components(separatedBy: "<tr><th scope=\"row\">\(year)</th><td>").dropFirst().first ?? "0"
                #expect((Int(row.prefix { $0.isNumber }) ?? 0) >= 40 * album.tracks.count, "\(year): \(row.prefix(20))")
            }
            #expect(!page.body.contains("<tr><th scope=\"row\">2022</th><td>"))
            #expect(!page.body.contains("<tr><th scope=\"row\">2023</th><td>"))
        }
    }

    /// theo started in 2019: from July 2023, four years back is as far as
    /// his year links go; mara's every-year page skips her gap.
    @Test func yearsFollowEachHistory() async throws {
        try await Harness.run(demo: true) { _, client in
            let oldest = try await client.get("/u/theo?years_ago=4")
            #expect(oldest.body.contains("class=\"row\""))
            #expect(oldest.body.contains("<span class=\"year prev\" aria-disabled=\"true\">"))
            let before = try await client.get("/u/theo?years_ago=5")
            #expect(before.body.contains("theo's listening history starts in 2019, after this week.".escapedForHTML))

            // July 2022, 2021 and 2020; then nothing from 2019 back to 2013; then 2012 to 2008.
            let mara = try await client.get("/u/mara/history")
            for shown in [1, 2, 3, 11, 12, 13, 14, 15] { #expect(mara.body.contains(">\(WeekLabels.yearsAgo(shown))</a>"), "\(shown)") }
            for hidden in 4...10 { #expect(!mara.body.contains(">\(WeekLabels.yearsAgo(hidden))</a>"), "\(hidden)") }
            // A year in the gap is an empty week, not an error.
            let gap = try await client.get("/u/mara?years_ago=6")
            #expect(gap.status == .ok)
            #expect(gap.body.contains("No albums that week."))
        }
    }

    /// The demo asks Last.fm nothing, but someone real can still be added
    /// (with a key, here the fake's) and charted beside the demo's people.
    @Test func realPeopleCanStillBeAdded() async throws {
        try await Harness.run(demo: true) { harness, client in
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "YBSC"], session: session)
            #expect(added.status == .seeOther)
            #expect(try await harness.lists.users().map(\.name) == ["demo", "theo", "mara", "felix", "june", "ybsc"])
            let chart = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(chart.body.contains("Live at The Electric Ballroom"))
            #expect(chart.body.contains("<a href=\"https://www.last.fm/user/ybsc\" rel=\"noopener\" class=\"username\">ybsc</a>"))
            let asked = await harness.fake.requests().compactMap { $0.parameters["user"].flatMap(Username.init(validating:)) }
            #expect(asked.contains(try Username("ybsc")))
            #expect(!asked.contains(where: DemoHousehold.isMember), "asked Last.fm about \(asked)")
        }
    }

    /// Without `--demo` there is no demo person: nobody is listed, and the
    /// demo's names are asked of Last.fm like anyone's, also on a data
    /// directory an earlier `serve --demo` filled.
    @Test func withoutTheDemoNoneOfItsPeopleExist() async throws {
        let directory = Harness.scratch.appendingPathComponent("vinylogue-demo-then-real-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Harness.run(demo: true, directory: directory) { harness, client in
            let listed = try await harness.lists.users()
            let theo = try await client.get("/u/theo")
            #expect(listed.count == 5)
            #expect(theo.status == .ok)
        }
        try await Harness.run(directory: directory) { harness, client in
            #expect(try await harness.lists.users().isEmpty)
            let home = try await client.get("/")
            #expect(home.body.contains("Your Last.fm username"))  // onboarding
            #expect(!home.body.contains("data-user=\"theo\""))
            // The fake Last.fm knows no theo: the page says so, from Last.fm.
            let theo = try await client.get("/u/theo")
            #expect(theo.status == .notFound)
            #expect(await harness.fake.requests().contains { $0.parameters["user"] == "theo" })
            let everyone = try await client.get("/everyone")
            #expect(!everyone.body.contains("data-user=\"theo\""))
        }
    }

    /// Last.fm's own `demo` (the fake Last.fm has one), added by hand on a
    /// real instance, is not the demo's: a restart leaves it on the list.
    @Test func aDemoAddedByHandStays() async throws {
        let directory = Harness.scratch.appendingPathComponent("vinylogue-real-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Harness.run(directory: directory) { harness, client in
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "demo"], session: session)
            let listed = try await harness.lists.users().map(\.name)
            #expect(added.status == .seeOther)
            #expect(listed == ["demo"])
        }
        try await Harness.run(directory: directory) { harness, _ in
            let listed = try await harness.lists.users().map(\.name)
            #expect(listed == ["demo"])
        }
    }
}
