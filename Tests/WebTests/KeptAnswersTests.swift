import Foundation
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore

/// The everyone page, the JSON API and the every-year page are kept in the
/// rendered-page cache as the chart pages are: for a minute, complete
/// answers only, under what was asked. A hit is seen as the archive
/// changing underneath while the kept answer stays the same, until the
/// key changes (the list, the settings) or the minute is up.
@Suite struct KeptAnswersTests {
    static let user = try! Username("offliner")
    /// 5–12 July 2020: the week three years before the harness's clock.
    static let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)

    /// `count` plays of "Offline Album" in `week`, the first at `first` minutes in.
    static func plays(_ count: Int, from first: Int = 0) -> [Scrobble] {
        (first..<first + count).map { n in
            Scrobble(instant: week.from + Int64(n) * 600, artist: "Local Artist", album: "Offline Album", track: "T\(n)")
        }
    }

    static func archive(_ scrobbles: [Scrobble], _ harness: Harness) async throws {
        try await SQLiteScrobbleStore(database: harness.database).store(scrobbles, of: user, origin: .lastFMExport)
    }

    /// Past the rendered-page cache's minute.
    static func pastTheMinute(_ harness: Harness) { harness.clock.advance(days: 61.0 / 86_400) }

    @Test func theEveryonePageIsKeptAndFollowsTheList() async throws {
        try await Harness.run { harness, client in
            try await Self.archive(Self.plays(6), harness)
            _ = try await harness.lists.add(Self.user)
            let first = try await client.get("/everyone?years_ago=3")
            #expect(first.status == .ok)
            #expect(first.body.containsInOrder(["data-user=\"offliner\"", "Offline Album", "6 plays"]))

            // Three more plays reach the archive: the kept page is served.
            try await Self.archive(Self.plays(3, from: 6), harness)
            let kept = try await client.get("/everyone?years_ago=3")
            #expect(kept.body == first.body)

            // Another number of years is another page.
            let four = try await client.get("/everyone?years_ago=4")
            #expect(four.body.contains("4 years ago"))

            // A change to the list shows at once, made from the archive as it is now.
            _ = try await harness.lists.add(try Username("ybsc"))
            let listed = try await client.get("/everyone?years_ago=3")
            #expect(listed.body.containsInOrder(["data-user=\"offliner\"", "9 plays", "data-user=\"ybsc\"", "Live at The Electric Ballroom"]))

            // So does a change to the settings.
            let session = try await client.session()
            _ = try await client.post("/settings", ["filter": "16", "timezone": "UTC"], session: session)
            let filtered = try await client.get("/everyone?years_ago=3")
            #expect(!filtered.body.contains("9 plays"))
            #expect(filtered.body.containsInOrder(["data-user=\"ybsc\"", "Live at The Electric Ballroom", "22 plays"]))
        }
    }

    @Test func theEveryonePageFollowsTheClockAfterItsMinute() async throws {
        try await Harness.run { harness, client in
            try await Self.archive(Self.plays(6), harness)
            _ = try await harness.lists.add(Self.user)
            #expect(try await client.get("/everyone?years_ago=3").body.contains("6 plays"))
            try await Self.archive(Self.plays(3, from: 6), harness)
            #expect(try await client.get("/everyone?years_ago=3").body.contains("6 plays"))
            Self.pastTheMinute(harness)
            #expect(try await client.get("/everyone?years_ago=3").body.contains("9 plays"))
        }
    }

    /// A person whose chart failed for the moment is not kept as the page:
    /// the next visit asks again, and shows their chart.
    @Test func anEveryonePageWithAFailureOfTheMomentIsNotKept() async throws {
        try await Harness.run { harness, client in
            _ = try await harness.lists.add(try Username("ybsc"))
            await harness.fake.inject(.init(.apiError(code: 16, status: 200), method: "user.getweeklychartlist", times: 1))
            let failed = try await client.get("/everyone?years_ago=3")
            #expect(failed.status == .ok)
            #expect(failed.body.contains("role=\"alert\""))
            #expect(!failed.body.contains("Live at The Electric Ballroom"))
            let retried = try await client.get("/everyone?years_ago=3")
            #expect(retried.body.contains("Live at The Electric Ballroom"))
            #expect(!retried.body.contains("role=\"alert\""))
        }
    }

    @Test func theChartJSONIsKeptLikeThePage() async throws {
        try await Harness.run { harness, client in
            try await Self.archive(Self.plays(6), harness)
            let api = "/api/u/offliner/chart?week=2020-07-08"
            let first = try await client.get(api)
            #expect(first.status == .ok)
            #expect(first.headers[.contentType] == "application/json; charset=utf-8")
            #expect(first.body.contains("\"plays\" : 6"))
            try await Self.archive(Self.plays(3, from: 6), harness)
            // A hit: the kept answer, byte for byte, with the same headers.
            let kept = try await client.get(api)
            #expect(kept.body == first.body)
            #expect(kept.headers[.contentType] == "application/json; charset=utf-8")
            #expect(kept.headers[.cacheControl] == "no-cache")
            // Kept apart from the page: the page, not yet asked, is made now.
            #expect(try await client.get("/u/offliner/week/2020-07-08").body.contains("9 plays"))
            // Another filter in the address is another answer.
            #expect(try await client.get(api + "&min_plays=0").body.contains("\"plays\" : 9"))
            Self.pastTheMinute(harness)
            #expect(try await client.get(api).body.contains("\"plays\" : 9"))
        }
    }

    /// A complete page carries an `ETag`, the same when it is made and
    /// when it is kept, so a reload whose `If-None-Match` names it is a 304
    /// with no body; another tag, or a page changed since, is the page.
    @Test func aReloadOfAKeptPageIsNotModified() async throws {
        try await Harness.run { harness, client in
            try await Self.archive(Self.plays(6), harness)
            let page = "/u/offliner/week/2020-07-08"
            let first = try await client.get(page)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
            let kept = try await client.get(page)
            #expect(kept.headers[.eTag] == etag)
            let reload = try await client.execute(uri: page, method: .get, headers: [.ifNoneMatch: etag], body: nil)
            #expect(reload.status == .notModified)
            #expect(reload.body.readableBytes == 0)
            #expect(reload.headers[.eTag] == etag)
            let listed = try await client.execute(uri: page, method: .get, headers: [.ifNoneMatch: "\"other\", " + etag], body: nil)
            #expect(listed.status == .notModified)
            let other = try await client.execute(uri: page, method: .get, headers: [.ifNoneMatch: "\"other\""], body: nil)
            #expect(other.status == .ok)
            #expect(String(buffer: other.body) == first.body)
            // Changed since: past the minute the page is made again, with a new tag.
            try await Self.archive(Self.plays(3, from: 6), harness)
            Self.pastTheMinute(harness)
            let changed = try await client.execute(uri: page, method: .get, headers: [.ifNoneMatch: etag], body: nil)
            #expect(changed.status == .ok)
            #expect(changed.headers[.eTag] != etag)
            #expect(String(buffer: changed.body).contains("9 plays"))
        }
    }

    @Test func theEveryYearPageAndItsJSONAreKept() async throws {
        try await Harness.run { harness, client in
            try await Self.archive(Self.plays(6), harness)
            let page = try await client.get("/u/offliner/history")
            let json = try await client.get("/api/u/offliner/history")
            #expect(page.body.containsInOrder(["3 years ago", "Offline Album", "6 plays"]))
            #expect(json.body.contains("\"plays\" : 6"))
            try await Self.archive(Self.plays(3, from: 6), harness)
            #expect(try await client.get("/u/offliner/history").body == page.body)
            #expect(try await client.get("/api/u/offliner/history").body == json.body)
            Self.pastTheMinute(harness)
            #expect(try await client.get("/u/offliner/history").body.contains("9 plays"))
            #expect(try await client.get("/api/u/offliner/history").body.contains("\"plays\" : 9"))
        }
    }

    /// A failed JSON answer is never kept: the next request is answered afresh.
    @Test func failedJSONIsNotKept() async throws {
        try await Harness.run { harness, client in
            await harness.fake.inject(.init(.apiError(code: 16, status: 200), method: "user.getweeklychartlist", times: 1))
            let failed = try await client.get("/api/u/ybsc/chart?week=2020-07-08")
            #expect(failed.status == .badGateway)
            #expect(failed.body.contains("\"error\""))
            let retried = try await client.get("/api/u/ybsc/chart?week=2020-07-08")
            #expect(retried.status == .ok)
            #expect(retried.body.contains("Live at The Electric Ballroom"))
        }
    }
}
