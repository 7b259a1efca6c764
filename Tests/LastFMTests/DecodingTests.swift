import Foundation
@testable import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

/// Every captured fixture decodes into the values the app shows.
@Suite struct FixtureDecodingTests {
    @Test func userInfo() async throws {
        let user = try await withFakeLastFM { _, client in try await client.user(try Username("YBSC")) }
        #expect(user.name.value == "ybsc")  // Last.fm's canonical casing
        #expect(user.realName == "Christopher Trott")
        #expect(user.playCount == 88865)
        #expect(user.registered == Date(timeIntervalSince1970: 1_200_017_507))
        #expect(user.imageURL?.hasPrefix("https://lastfm.freetls.fastly.net/i/u/174s/") == true)
    }

    @Test func friends() async throws {
        let friends = try await withFakeLastFM { _, client in try await client.friends(of: ybsc) }
        #expect(friends.count == 16)
        #expect(friends.first?.name.value == "heyimtaka0121")
        #expect(friends.contains { $0.name.value == "roguewolves" && $0.realName == "Neal" })
    }

    @Test func chartList() async throws {
        let list = try await withFakeLastFM { _, client in try await client.chartList(for: ybsc) }
        #expect(list.weeks.count == 804)
        #expect(list.earliest == ChartWeek(from: 1_108_296_000, to: 1_108_900_800))
        #expect(list.latest == capturedWeek)
    }

    @Test func weeklyAlbumChart() async throws {
        let chart = try await withFakeLastFM { _, client in try await client.chart(for: ybsc, kind: .album, week: capturedWeek) }
        #expect(chart.entries.count == 13)
        #expect(chart.entries.map(\.rank) == Array(1...13))
        let first = try #require(chart.entries.first)
        #expect(first.artist == "PUP" && first.name == "Live at The Electric Ballroom" && first.plays == 22)
        #expect(first.mbid == "97f17e68-b106-450d-b6c4-68c50cb5b7d6")
        #expect(first.url == "https://www.last.fm/music/PUP/Live+at+The+Electric+Ballroom")
        #expect(chart.entries[5].mbid == nil)  // Rise Against: "" becomes nil
        #expect(chart.entries.last?.plays == 3)
    }

    @Test func albumInfo() async throws {
        let album = try await withFakeLastFM { _, client in
            try await client.album(artist: "Paramore", name: "Paramore", mbid: nil, user: ybsc)
        }
        #expect(album.name == "Paramore" && album.artist == "Paramore")
        #expect(album.listeners == 511_055 && album.playCount == 20_540_069 && album.userPlayCount == 235)
        #expect(album.tags.prefix(3) == ["2013", "alternative", "rock"])
        #expect(album.tracks.count == 17 && album.tracks[0].name == "Fast in My Car" && album.tracks[0].duration == 223)
        #expect(album.images[.extralarge]?.hasSuffix("300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png") == true)
        let summary = try #require(album.summary).plainText
        #expect(summary.hasPrefix("Paramore is the band's self-titled fourth studio album"))
        #expect(!summary.contains("Read more") && !summary.contains("<a"))
    }

    @Test func albumInfoByMBID() async throws {
        let album = try await withFakeLastFM { fake, client in
            let album = try await client.album(artist: "x", name: "y", mbid: "0b2345b3-1984-4e96-b60f-427827b9716a", user: nil)
            #expect(await fake.requests().last?.parameters["mbid"] == "0b2345b3-1984-4e96-b60f-427827b9716a")
            return album
        }
        #expect(album.name == "Paramore")
    }

    @Test func generatedUsersSpeakTheSameShapes() async throws {
        try await withFakeLastFM { _, client in
            let rj = try Username("rj")
            let user = try await client.user(rj)
            #expect(user.name.value == "RJ")
            let list = try await client.chartList(for: rj)
            #expect(list.weeks.count > 500)
            let chart = try await client.chart(for: rj, kind: .album, week: list.weeks[300])
            #expect(!chart.entries.isEmpty)
            let artists = try await client.chart(for: rj, kind: .artist, week: list.weeks[300])
            #expect(artists.entries.allSatisfy { $0.artist == $0.name })
            let page = try await client.recentTracks(of: rj, from: list.weeks[300].from, to: list.weeks[300].to - 1, page: 1, limit: 200)
            #expect(page.scrobbles.count == chart.entries.reduce(0) { $0 + $1.plays } || page.totalPages > 1)
            let recent = try await client.recentTracks(of: rj)
            #expect(!recent.scrobbles.contains { $0.track == "Right Now" })  // the now-playing entry is skipped
        }
    }
}

/// The wire shapes the fixtures lack, written from the API documentation.
@Suite struct QuirkDecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test func aOneRowChartArrivesAsAnObject() throws {
        let json = ##"{"weeklyalbumchart":{"album":{"artist":{"mbid":"","#text":"Solo"},"@attr":{"rank":"1"},"mbid":"","playcount":"5","name":"Only","url":"u"},"@attr":{"user":"x","from":"1","to":"2"}}}"##
        let chart = try decode(WeeklyChartResponse.self, json).value(user: ybsc, kind: .album, week: capturedWeek)
        #expect(chart.entries == [ChartEntry(rank: 1, artist: "Solo", name: "Only", plays: 5, url: "u")])
    }

    @Test func emptyListsInEveryForm() throws {
        for body in [#""album":[]"#, #""album":"""#, ""] {
            let json = "{\"weeklyalbumchart\":{" + body + "}}"
            #expect(try decode(WeeklyChartResponse.self, json).rows.isEmpty, "\(json)")
        }
        let list = try decode(ChartListResponse.self, ##"{"weeklychartlist":{"chart":[],"@attr":{"user":"x"}}}"##).value()
        #expect(list.isEmpty)
        let friends = try decode(FriendsResponse.self, ##"{"friends":{"user":[],"@attr":{"page":"1","totalPages":"0"}}}"##)
        #expect(friends.friends.user?.items.isEmpty == true)
    }

    @Test func numbersAsNumbersAndStringsAlike() throws {
        let json = ##"{"weeklyartistchart":{"artist":[{"name":"A","@attr":{"rank":1},"playcount":7,"mbid":""},{"name":"B","@attr":{"rank":"2"},"playcount":"","mbid":""}]}}"##
        let chart = try decode(WeeklyChartResponse.self, json).value(user: ybsc, kind: .artist, week: capturedWeek)
        #expect(chart.entries.map(\.plays) == [7, 0])
        #expect(chart.entries.map(\.artist) == ["A", "B"])
    }

    @Test func albumWithoutTagsTracksOrWiki() throws {
        let json = ##"{"album":{"name":"N","artist":"A","image":[{"#text":"","size":"small"}],"listeners":"3","playcount":"4","tags":"","tracks":{"track":{"name":"T","duration":null,"@attr":{"rank":1}}}}}"##
        let album = try decode(AlbumInfoResponse.self, json).value()
        #expect(album.tags.isEmpty && album.summary == nil && album.images.isEmpty)
        #expect(album.tracks == [AlbumDetail.Track(rank: 1, name: "T", duration: nil)])
        #expect(album.userPlayCount == nil)
    }

    @Test func registeredAsANumberOrAnObject() throws {
        let a = try decode(UserInfoResponse.self, ##"{"user":{"name":"abc","registered":{"unixtime":"100","#text":100}}}"##).user.value()
        let b = try decode(UserInfoResponse.self, ##"{"user":{"name":"abc","registered":{"#text":200}}}"##).user.value()
        #expect(a.registered == Date(timeIntervalSince1970: 100))
        #expect(b.registered == Date(timeIntervalSince1970: 200))
    }

    @Test func recentTracksSkipNowPlaying() throws {
        let json = ##"{"recenttracks":{"track":[{"artist":{"#text":"A","mbid":""},"album":{"#text":"B","mbid":"m"},"name":"Now","@attr":{"nowplaying":"true"}},{"artist":{"#text":"A","mbid":""},"album":{"#text":"B","mbid":"m"},"name":"T","mbid":"","date":{"uts":"1594000000","#text":"x"}}],"@attr":{"page":"1","totalPages":"3","total":"401","perPage":"200"}}}"##
        let page = try decode(RecentTracksResponse.self, json).value()
        #expect(page.scrobbles == [Scrobble(instant: 1_594_000_000, artist: "A", album: "B", track: "T", albumMBID: "m")])
        #expect(page.totalPages == 3 && page.total == 401)
    }
}

/// The fixtures the fake serves are the shared, captured ones, byte for byte.
///
/// The captures live in `shared/fixtures/lastfm` beside the checkout. Away
/// from them the check is skipped, and says so; in CI (`CI` set) they must
/// be there, so a missing copy fails instead of passing unseen.
@Suite struct FixtureProvenanceTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shared = repo.deletingLastPathComponent().appendingPathComponent("shared/fixtures/lastfm")
    static let names = ["album.getinfo", "user.getfriends", "user.getinfo", "user.getweeklyalbumchart", "user.getweeklychartlist"]
    static var sharedIsBeside: Bool { FileManager.default.fileExists(atPath: shared.path) }
    static var inCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }

    @Test(.enabled(if: sharedIsBeside || inCI, "shared/fixtures/lastfm is not beside this checkout: the captures cannot be compared"))
    func bundledFixturesMatchTheSharedCaptures() throws {
        #expect(Self.sharedIsBeside, "\(Self.shared.path) is missing: CI must have the shared captures beside the checkout")
        let bundled = Self.repo.appendingPathComponent("Sources/LastFMTestServer/Fixtures")
        for name in Self.names {
            let ours = try Data(contentsOf: bundled.appendingPathComponent("\(name).json"))
            #expect(!ours.isEmpty)
            guard Self.sharedIsBeside else { continue }
            let theirs = try Data(contentsOf: Self.shared.appendingPathComponent("\(name).json"))
            #expect(ours == theirs, "\(name).json differs from shared/fixtures")
        }
    }
}
