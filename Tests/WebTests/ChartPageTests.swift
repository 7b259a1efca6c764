import Foundation
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import Testing
import VinylogueCore

@Suite struct ChartPageTests {
    @Test func theCapturedWeekListsPUPFirst() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.contains("Week 28 · Jul 5 – 12, 2020"))
            #expect(page.body.containsInOrder(["PUP", "Live at The Electric Ballroom", "22 plays", "CoVet", "technicolor", "20 plays"]))
            #expect(page.body.contains("Nova Charisma"))
            // Dated pages link to dated neighbours; the list ends in July 2020.
            #expect(page.body.contains("href=\"/u/ybsc/week/2019-07-08\""))
            #expect(page.body.contains("<span class=\"year next\" aria-disabled=\"true\">2021 →</span>"))
        }
    }

    /// One address per user: another casing redirects to Last.fm's spelling
    /// (rj is "RJ" there), keeping the rest of the path and the query, so the
    /// page is rendered and cached once.
    @Test func anyCasingRedirectsToLastFMsSpelling() async throws {
        try await Harness.run { harness, client in
            let lower = try await client.get("/u/rj/week/2020-07-08?kind=artist")
            #expect(lower.status == .found)
            #expect(lower.headers[.location] == "/u/RJ/week/2020-07-08?kind=artist")
            let album = try await client.get("/u/Rj/album/Some%20Artist/Some%20Album")
            #expect(album.headers[.location] == "/u/RJ/album/Some%20Artist/Some%20Album")
            let canonical = try await client.get("/u/RJ/week/2020-07-08?kind=artist")
            #expect(canonical.status == .ok)
            #expect(canonical.body.contains("<h1") && canonical.body.contains("RJ"))
            // Learned once: later requests need no further user.getinfo.
            let asked = await harness.fake.requests().filter { $0.method == "user.getinfo" }.count
            _ = try await client.get("/u/rJ")
            #expect(await harness.fake.requests().filter { $0.method == "user.getinfo" }.count == asked)
            // A name Last.fm does not know is not redirected; the page says so,
            // and the failed lookup is not repeated on the next request.
            let unknown = try await client.get("/u/Nobody")
            #expect(unknown.status == .notFound)
            let lookups = await harness.fake.requests().filter { $0.method == "user.getinfo" }.count
            _ = try await client.get("/u/Nobody")
            #expect(await harness.fake.requests().filter { $0.method == "user.getinfo" }.count == lookups)
            // A listed user resolves from the list, without user.getinfo.
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "ybsc"], session: session)
            #expect(added.status == .seeOther)
            #expect(try await harness.lists.users().map(\.name) == ["ybsc"])
            let lookupsBeforeListed = await harness.fake.requests().filter { $0.method == "user.getinfo" }.count
            #expect(try await client.get("/u/YBSC").headers[.location] == "/u/ybsc")
            #expect(await harness.fake.requests().filter { $0.method == "user.getinfo" }.count == lookupsBeforeListed)
        }
    }

    /// A Last.fm that is slow to answer user.getinfo does not hold the page
    /// up: the page is served under the address asked for.
    @Test func aSlowNameLookupDoesNotHoldThePageUp() async throws {
        try await Harness.run(patience: .init(nameLookup: .milliseconds(100), albumColours: .seconds(10), lastFM: .seconds(10))) { harness, client in
            await harness.fake.inject(.init(.delay(milliseconds: 8_000), method: "user.getinfo"))
            let page = try await client.get("/u/rj/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.contains("2020"))
        }
    }

    /// Used to wait for Last.fm however slow it was (46.5 s with a 20 s
    /// delay): the page now answers once its patience is up, and the answer
    /// that arrives later is there for the next visit.
    @Test(.timeLimit(.minutes(1))) func aSlowLastFMGetsAClearPageInTimeAndTheAnswerIsKept() async throws {
        try await Harness.run(patience: .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .milliseconds(200))) { harness, client in
            // RJ's profile and week list first, so the slow call is the chart
            // (this page also fetches 2020's week ahead, not 2018's).
            // Each try's requests carry on after its patience, so this ends.
            while try await client.get("/u/RJ/week/2021-07-08").status != .ok {}
            await harness.idle()  // its year before, fetched ahead, has been asked
            // And only 2018's week is held, whatever else is on its way.
            // 1520164800: Sunday 4 March 2018, 12:00 UTC, the start of the week of 8 March.
            await harness.fake.inject(.init(.held, method: "user.getweeklyalbumchart", times: 1, parameters: ["from": "1520164800"]))
            let slow = try await client.getOnce("/u/RJ/week/2018-03-08")
            #expect(slow.status == .serviceUnavailable)
            #expect(slow.body.contains("Last.fm is slow to answer right now"))
            #expect(slow.body.contains("Reload in a minute"))
            await harness.fake.untilHolding(1)
            await harness.fake.releaseHeld()
            // The held request finishes and is stored: a reload joins it or reads it.
            var page = try await client.get("/u/RJ/week/2018-03-08")
            while page.status != .ok { page = try await client.get("/u/RJ/week/2018-03-08") }
            #expect(page.body.contains("2018"))
            // The slow request was not made twice (other weeks asked for are
            // the years before, fetched ahead).
            let charts = await harness.fake.requests().filter { $0.method == "user.getweeklyalbumchart" }
            #expect(Dictionary(grouping: charts, by: { $0.parameters["from"] ?? "" }).values.allSatisfy { $0.count == 1 })
        }
    }

    @Test func yearsAgoIsRelativeToTheClock() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc?years_ago=3")
            #expect(page.body.contains("3 years ago"))
            #expect(page.body.contains("Live at The Electric Ballroom"))
            #expect(page.body.contains("href=\"/u/ybsc?years_ago=4\""))
        }
    }

    @Test func theAPIReturnsTheCLIShape() async throws {
        try await Harness.run { _, client in
            let response = try await client.get("/api/u/ybsc/chart?week=2020-07-08")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
            let entries = try #require(json["entries"] as? [[String: Any]])
            #expect(entries.count == 13)
            #expect(entries.first?["name"] as? String == "Live at The Electric Ballroom")
            #expect((json["week"] as? [String: Int])?["from"] == 1_593_950_400)
            let byYears = try await client.get("/api/u/ybsc/chart?years_ago=3")
            #expect(byYears.body == response.body.replacingOccurrences(of: "\"yearsAgo\" : 2", with: "\"yearsAgo\" : 3"))
        }
    }

    @Test func theFilterHidesRowsAndSaysSo() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            let saved = try await client.post("/settings", ["filter": "8", "timezone": "UTC"], session: session)
            #expect(saved.status == .seeOther)
            let page = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(page.body.contains("Against Me!"))  // New Wave, 10 plays
            #expect(!page.body.contains("Compassion"))  // 8 plays: hidden
            #expect(!page.body.contains("Exposition I"))
            #expect(page.body.contains("3 albums with 8 plays or fewer are hidden."))
            let api = try await client.get("/api/u/ybsc/chart?week=2020-07-08&min_plays=0")
            #expect(api.body.contains("Exposition I"))
        }
    }

    @Test func hostileNamesRenderAsText() async throws {
        try await Harness.run { harness, client in
            let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
            await harness.fake.add(user: "mallory", .scripted(weeks: [week], albums: [
                ChartEntry(rank: 1, artist: "<script>alert(1)</script>", name: "\"><img src=x onerror=alert(2)>", plays: 9),
                ChartEntry(rank: 2, artist: "Tom & Jerry's", name: "{{layout.csrf}}", plays: 3),
            ]))
            let page = try await client.get("/u/mallory/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(!page.body.contains("<script>alert"))
            #expect(!page.body.contains("<img src=x"))
            #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(page.body.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
            #expect(page.body.contains("Tom &amp; Jerry&#39;s"))
            #expect(page.body.contains("{{layout.csrf}}"))  // data is never a template
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
        }
    }

    @Test func unknownUsersAndBadAddressesGetAPage() async throws {
        try await Harness.run { _, client in
            let unknown = try await client.get("/u/nosuchuser")
            #expect(unknown.status == .notFound)
            #expect(unknown.body.contains("was not found on Last.fm"))
            #expect(unknown.body.contains("Try again"))
            let invalid = try await client.get("/u/%3Cscript%3E")
            #expect(invalid.status == .badRequest)
            #expect(invalid.body.contains("is not a Last.fm username") || invalid.body.contains("not a Last.fm username"))
            let badDate = try await client.get("/u/ybsc/week/2020-02-31")
            #expect(badDate.status == .badRequest)
            // The date is echoed as the person typed it, decoded, escaped and cut short.
            let spaced = try await client.get("/u/ybsc/week/8%20July%202020")
            #expect(spaced.body.contains("“8 July 2020” is not a date"))
            let marked = try await client.get("/u/ybsc/week/%3Cb%3E" + String(repeating: "9", count: 200))
            #expect(marked.body.contains("“&lt;b&gt;" + String(repeating: "9", count: 36) + "…” is not a date"))
            let badYears = try await client.get("/u/ybsc?years_ago=-2")
            #expect(badYears.status == .badRequest)
            let missing = try await client.get("/no/such/page")
            #expect(missing.status == .notFound)
            #expect(missing.body.contains("There is no page at this address"))
        }
    }

    @Test func anEmptyWeekSaysSo() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc/week/2020-07-01")
            #expect(page.status == .ok)
            #expect(page.body.contains("No albums that week."))
        }
    }

    @Test func whenLastFMFailsTheSavedCopyIsShownWithANote() async throws {
        try await Harness.run { harness, client in
            let first = try await client.get("/u/ybsc?years_ago=3")
            #expect(first.body.contains("Live at The Electric Ballroom"))
            // A week later the chart list is due for a refresh, but Last.fm is down.
            harness.clock.advance(days: 8)
            await harness.fake.inject(.init(.apiError(code: 11, status: 503)))
            let later = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(later.status == .ok)
            #expect(later.body.contains("Live at The Electric Ballroom"))
            #expect(later.body.contains("Showing a saved copy: Last.fm is temporarily unavailable"))
        }
    }

    @Test func failuresAreNeverCached() async throws {
        try await Harness.run { harness, client in
            await harness.fake.inject(.init(.apiError(code: 16, status: 200), method: "user.getweeklychartlist", times: 1))
            let failed = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(failed.status == .badGateway)
            #expect(failed.body.contains("Try again"))
            let retried = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(retried.status == .ok)
            #expect(retried.body.contains("Live at The Electric Ballroom"))
        }
    }

    @Test func pastWeeksAreFetchedOnce() async throws {
        try await Harness.run { harness, client in
            _ = try await client.get("/u/ybsc/week/2020-07-08")
            await harness.fake.clearLog()
            _ = try await client.get("/u/ybsc/week/2020-07-08")
            _ = try await client.get("/api/u/ybsc/chart?week=2020-07-08")
            // The chart list and the closed week both come from the cache.
            let requests = await harness.fake.requests()
            #expect(!requests.contains { $0.method == "user.getweeklyalbumchart" && $0.parameters["from"] == "1593950400" })
            #expect(!requests.contains { $0.method == "user.getweeklychartlist" })
        }
    }

    @Test func theYearBeforeIsPrecached() async throws {
        try await Harness.run { harness, client in
            let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
            let before = ChartWeek(from: week.from - 52 * 604_800, to: week.to - 52 * 604_800)
            await harness.fake.add(user: "prefetch", .scripted(weeks: [before, week], albums: [ChartEntry(rank: 1, artist: "A", name: "B", plays: 2)]))
            _ = try await client.get("/u/prefetch/week/2020-07-08")
            await harness.idle()
            let fetched = await harness.fake.requests().contains { $0.method == "user.getweeklyalbumchart" && $0.parameters["from"] == String(before.from) }
            #expect(fetched)
        }
    }

    @Test func renderedPagesFollowSettingsAndExpire() async throws {
        try await Harness.run { harness, client in
            let first = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(first.body.contains("Exposition I"))
            let session = try await client.session()
            _ = try await client.post("/settings", ["filter": "4", "timezone": "UTC"], session: session)
            let filtered = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(!filtered.body.contains("Exposition I"))
            // A "years ago" page follows the clock once its minute is up.
            let before = try await client.get("/u/ybsc?years_ago=3")
            #expect(before.body.contains("Week 28"))
            harness.clock.advance(days: 7)
            let after = try await client.get("/u/ybsc?years_ago=3")
            #expect(!after.body.contains("Week 28 ·"))
        }
    }
}
