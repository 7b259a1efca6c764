import Foundation
import GRDB
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

@Suite struct ArchiveChartTests {
    /// Twelve weeks of a generated history, with some names in other
    /// casings, as a Last.fm CSV export of our own making (newest first).
    static func madeUpExport() -> (scrobbles: [Scrobble], weeks: [ChartWeek]) {
        let history = DemoHistory(seed: 99, start: 1_400_000_000)
        // From the fifth week on: the first weeks of a history are still empty.
        let weeks = (4..<16).map { ChartWeek(from: history.firstWeek.from + Int64($0) * LastFMWeekCalendar.weekLength,
                                             to: history.firstWeek.to + Int64($0) * LastFMWeekCalendar.weekLength) }
        var rng = SplitMix64(seed: 5)
        var scrobbles: [Scrobble] = []
        for week in weeks {
            for s in history.scrobbles(in: week) {
                let roll = rng.next() % 6
                let album = roll == 0 ? s.album.uppercased() : roll == 1 ? s.album.lowercased() : s.album
                let artist = roll == 2 ? s.artist.uppercased() : s.artist
                scrobbles.append(Scrobble(instant: s.instant, artist: artist, album: rng.next() % 40 == 0 ? "" : album, track: s.track,
                                          albumMBID: rng.next() % 3 == 0 ? "mbid-\(s.album.count)" : nil))
            }
        }
        return (scrobbles, weeks)
    }

    @Test func importedExportChartsMatchAnIndependentCount() async throws {
        let dir = try TemporaryDirectory()
        let (scrobbles, weeks) = Self.madeUpExport()
        let text = ([csvHeader] + scrobbles.reversed().map(csvLine)).joined(separator: "\n") + "\n"
        let path = try dir.file("export.csv", text)
        let store = try dir.store()
        let first = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(first.imported == scrobbles.count && first.rejectedCount == 0 && scrobbles.count > 500)

        let source = ArchiveChartSource(store: store)
        let list = try await source.chartList(for: alice)
        #expect(list.weeks == weeks)
        #expect(list.earliest == weeks.first && list.latest == weeks.last)
        var before: [WeeklyChart] = []
        for week in weeks {
            let chart = try await source.chart(for: alice, kind: .album, week: week)
            #expect(counts(of: chart) == independentAlbumCounts(scrobbles, in: week))
            #expect(!chart.entries.isEmpty && chart.entries.map(\.rank) == Array(1...chart.entries.count))
            before.append(chart)
        }

        let second = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(second.imported == 0 && second.duplicates == scrobbles.count)
        #expect(try await store.scrobbleCount(of: alice) == scrobbles.count)
        for (week, chart) in zip(weeks, before) {
            #expect(try await source.chart(for: alice, kind: .album, week: week) == chart)
        }
    }

    @Test(arguments: ChartKind.allCases)
    func archiveChartIsIdenticalToScrobbleTally(kind: ChartKind) async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let (scrobbles, weeks) = Self.madeUpExport()
        try await store.store(scrobbles, of: alice, origin: .lastFMExport)
        let source = ArchiveChartSource(store: store)
        for week in weeks + [ChartWeek(from: weeks[3].from + 3600, to: weeks[5].to - 7200)] {
            let expected = ScrobbleTally.chart(kind, user: alice, week: week, scrobbles: scrobbles)
            let actual = try await source.chart(for: alice, kind: kind, week: week)
            #expect(actual == expected)
            #expect(!actual.entries.isEmpty)
        }
    }

    @Test func everyYearEqualsTheWeeklyCharts() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let history = DemoHistory(seed: 11, start: 1_293_969_600)
        let now = Date(timeIntervalSince1970: 1_293_969_600 + 6 * 365.25 * 86_400)
        let filled = try await GeneratedHistory(history: history, user: alice, store: store).fill(now: now)
        #expect(filled > 10_000)
        let source = ArchiveChartSource(store: store)
        let result = try await source.everyYear(for: alice, limit: 3, now: now, timeZone: .gmt)
        #expect(result.years.map(\.yearsAgo) == [1, 2, 3, 4, 5])
        let finder = ChartWeekFinder(timeZone: .gmt)
        for year in result.years {
            let week = LastFMWeekCalendar.week(containing: Int64(finder.target(yearsAgo: year.yearsAgo, from: now).timeIntervalSince1970))
            #expect(year.week == week)
            let chart = ScrobbleTally.chart(.album, user: alice, week: week, scrobbles: history.scrobbles(in: week))
            #expect(year.entries == Array(chart.entries.prefix(3)))
            #expect(year.totalEntries == chart.entries.count)
        }
    }

    @Test func generatedDemoIsIdempotentAndMatchesTheDemoSource() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let history = DemoHistory()
        let clock = WallClock.fixed(Date(timeIntervalSince1970: 1_293_969_600 + 2 * 365 * 86_400))
        let generated = GeneratedHistory(history: history, store: store)
        let added = try await generated.fill(now: clock.now)
        #expect(added > 0)
        #expect(try await generated.fill(now: clock.now) == 0)
        #expect(try await store.scrobbleCount(of: DemoHistory.username) == added)
        let later = clock.now.addingTimeInterval(3 * 7 * 86_400)
        let more = try await generated.fill(now: later)
        #expect(more > 0 && more < added / 10)

        let demo = DemoChartSource(history: history, clock: clock)
        let archive = ArchiveChartSource(store: store)
        let request = WeeklyChartPage.Request(user: DemoHistory.username, selection: .yearsAgo(1))
        let fromArchive = await WeeklyChartPage.load(request, from: archive, now: clock.now)
        let fromDemo = await WeeklyChartPage.load(request, from: demo, now: clock.now)
        #expect(fromArchive.state == .chart)
        #expect(fromArchive.rows == fromDemo.rows)
        #expect(fromArchive.week == fromDemo.week)
    }

    /// The demo's friends are not archived: `DemoChartSource` computes their
    /// album lives and rediscoveries. It answers as the archive does for the
    /// same history (felix's, archived here), his album of seven years and
    /// every rediscovery included.
    @Test func theDemoSourceKnowsAnAlbumsLifeAsTheArchiveDoes() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let household = DemoHousehold()
        let felix = try #require(household.member(try Username("felix")))
        let clock = WallClock.fixed(Date(timeIntervalSince1970: 1_795_522_320))  // Tue 24 Nov 2026
        try await GeneratedHistory(history: felix.history, user: felix.username, store: store).fill(now: clock.now)
        let archive = ArchiveChartSource(store: store)
        let demo = DemoChartSource(household: household, clock: clock)

        let album = try #require(felix.history.repeatedAlbum)
        let archived = try #require(try await archive.albumWeeks(of: felix.username, artist: album.artist, album: album.name.uppercased()))
        let computed = try #require(try await demo.albumWeeks(of: felix.username, artist: album.artist, album: album.name.uppercased()))
        #expect(archived.count > 300)
        #expect(computed == archived)
        let since = Int64(clock.now.timeIntervalSince1970) - 400 * 86_400
        #expect(try await demo.albumsPlayed(by: felix.username, since: since) == archive.albumsPlayed(by: felix.username, since: since))

        let fromArchive = try await Rediscoveries.load(user: felix.username, now: clock.now, timeZone: .gmt, charts: archive)
        let fromDemo = try await Rediscoveries.load(user: felix.username, now: clock.now, timeZone: .gmt, charts: demo)
        #expect(fromDemo == fromArchive)
        #expect(fromDemo.finds.first.map { [$0.artist, $0.name] } == [album.artist, album.name])
    }

    @Test func unknownUserIsNotFound() async throws {
        let dir = try TemporaryDirectory()
        let source = ArchiveChartSource(store: try dir.store())
        await #expect(throws: SourceError.self) { try await source.chartList(for: alice) }
    }
}
