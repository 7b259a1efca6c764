import Foundation
import Testing
import VinylogueCore

/// An album source held in memory.
struct StubAlbumSource: AlbumSource {
    var answer: Result<AlbumDetail, SourceError>

    func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
        try answer.get()
    }
}

@Suite struct AlbumPageTests {
    let today = Date(timeIntervalSince1970: 1_763_900_000)  // Sun 23 Nov 2025
    let labels = WeekLabels(timeZone: .gmt)

    /// An album from a week of the demo's chart, opened from that week:
    /// its details, and the plays that week.
    @Test func showsTheDemosAlbumWithThePlaysOfItsWeek() async throws {
        let demo = DemoChartSource(clock: .fixed(today))
        let list = try await demo.chartList(for: DemoHistory.username)
        let week = list.weeks[400]
        let top = try #require(try await demo.chart(for: DemoHistory.username, kind: .album, week: week).entries.first)
        let asked = AlbumPage.Request(user: DemoHistory.username, artist: top.artist.uppercased(), name: top.name,
                                      day: week.fromDate.addingTimeInterval(3 * 86400))
        let page = await AlbumPage.load(asked, albums: demo, charts: demo)
        #expect(page.state == .loaded)
        #expect(page.artist == top.artist)  // as the source spells it
        #expect(page.detail?.tracks.isEmpty == false)
        #expect(page.week == week)
        #expect(page.weekLabel == labels.label(for: week))
        #expect(page.weekPlays == top.plays)
    }

    @Test func withoutAWeekThereAreNoWeekPlays() async throws {
        let demo = DemoChartSource(clock: .fixed(today))
        let album = try #require(demo.history.catalog.albums.first)
        let page = await AlbumPage.load(.init(user: DemoHistory.username, artist: album.artist, name: album.name), albums: demo, charts: demo)
        #expect(page.state == .loaded)
        #expect(page.week == nil && page.weekPlays == nil)
        #expect(page.weekLabel == "this week")
    }

    @Test func anUnknownAlbumIsMissing() async {
        let demo = DemoChartSource(clock: .fixed(today))
        let page = await AlbumPage.load(.init(user: DemoHistory.username, artist: "Nobody", name: "Nothing"), albums: demo, charts: demo)
        #expect(page.state == .missing(message: "Last.fm has no album called “Nothing” by Nobody."))
        #expect(page.failure == nil && page.detail == nil)
    }

    /// A private profile fails the album page as it fails the chart, even
    /// though the album itself could be shown.
    @Test func aPrivateProfileFailsThePage() async throws {
        let demo = DemoChartSource(clock: .fixed(today))
        let album = try #require(demo.history.catalog.albums.first)
        let charts = StubChartSource(list: ChartWeekList([]), failure: .privateProfile(user: "hidden"))
        let page = await AlbumPage.load(.init(user: try Username("hidden"), artist: album.artist, name: album.name, day: today),
                                        albums: demo, charts: charts)
        #expect(page.state == .failed(.privateProfile(user: "hidden")))
        #expect(page.detail == nil)
    }

    /// Last.fm failing for the moment on the list costs the week's plays
    /// only; failing on the album fails the page but keeps the week's plays.
    @Test func passingFailuresCostOnlyWhatFailed() async throws {
        let demo = DemoChartSource(clock: .fixed(today))
        let list = try await demo.chartList(for: DemoHistory.username)
        let week = list.weeks[400]
        let top = try #require(try await demo.chart(for: DemoHistory.username, kind: .album, week: week).entries.first)
        let asked = AlbumPage.Request(user: DemoHistory.username, artist: top.artist, name: top.name, day: week.fromDate.addingTimeInterval(86400))
        let noList = await AlbumPage.load(asked, albums: demo, charts: StubChartSource(list: list, failure: .timeout))
        #expect(noList.state == .loaded)
        #expect(noList.weekPlays == nil && noList.weekLabel == "this week")
        #expect(noList.weekPlaysFailure == .timeout)  // the page says what is missing
        let slowWeek = await AlbumPage.load(asked, albums: demo, charts: StubChartSource(list: list, chartFailure: .stillWaiting, failingWeeks: [week]))
        #expect(slowWeek.state == .loaded && slowWeek.weekPlays == nil)
        #expect(slowWeek.weekPlaysFailure == .stillWaiting)
        let noAlbum = await AlbumPage.load(asked, albums: StubAlbumSource(answer: .failure(.temporarilyUnavailable(detail: "HTTP 503"))), charts: demo)
        #expect(noAlbum.failure == .temporarilyUnavailable(detail: "HTTP 503"))
        #expect(noAlbum.weekPlays == top.plays)
        #expect(noAlbum.name == top.name)  // as asked
        #expect(noAlbum.weekPlaysFailure == nil)
    }
}
