import Foundation
import PostgresStore
import Synchronization
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The scrobble archive's contract (`ScrobbleArchive`), run against SQLite
/// and PostgreSQL: the same writes give the same rows, counts and charts.
@Suite struct ArchiveContractTests {
    typealias Backend = StoreContractTests.Backend

    static let alice = try! Username("Alice")
    static let t: Int64 = 1_600_000_000

    @Test(arguments: Backend.allCases)
    func recentScrobblesArePagedNewestFirstWithTheRangesTotal(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            #expect(try await archive.recentScrobbles(of: Self.alice, from: 0, to: .max, limit: 10, offset: 0) == RecentScrobbles(total: 0, scrobbles: []))
            let all = (0..<25).map { Scrobble(instant: Self.t + Int64($0) * 600, artist: "A", album: "B", track: "T\($0)") }
            _ = try await archive.store(all.shuffled(), of: Self.alice, origin: .received)
            let first = try await archive.recentScrobbles(of: Self.alice, from: 0, to: .max, limit: 10, offset: 0)
            #expect(first.total == 25 && first.scrobbles == Array(all.reversed().prefix(10)))
            let last = try await archive.recentScrobbles(of: Username("alice"), from: 0, to: .max, limit: 10, offset: 20)
            #expect(last.total == 25 && last.scrobbles == Array(all.reversed().suffix(5)))
            // A range: [from, to), its own total.
            let range = try await archive.recentScrobbles(of: Self.alice, from: Self.t + 600, to: Self.t + 3_000, limit: 2, offset: 1)
            #expect(range.total == 4 && range.scrobbles.map(\.track) == ["T3", "T2"])
        }
    }

    @Test(arguments: Backend.allCases)
    func theDuplicateRuleCountsRepeatsAndNearRepeatsOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.theDuplicateRuleCountsRepeatsAndNearRepeatsOnce(stores.scrobbles) }
    }

    static func theDuplicateRuleCountsRepeatsAndNearRepeatsOnce(_ archive: any ScrobbleArchive) async throws {
                #expect(try await archive.storedName(of: Self.alice) == nil)
        #expect(try await archive.charts(.album, of: Self.alice, weeks: [ChartWeek(from: Self.t, to: Self.t + 604_800)]) == nil)
        let unique = (0..<150).map { Scrobble(instant: Self.t + Int64($0) * 60, artist: "A", album: "B", track: "T\($0 % 7)") }
        let withRepeats = unique + unique.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        #expect(try await archive.store(withRepeats.shuffled(), of: Self.alice, origin: .lastFMExport) == InsertCounts(inserted: 150, duplicates: 15))
        #expect(try await archive.store(unique, of: Self.alice, origin: .lastFMSync) == InsertCounts(inserted: 0, duplicates: 150))
        // The same play from another source, 30 s off and in other case.
        let near = Scrobble(instant: Self.t + 30, artist: "a", album: "Other", track: "t0")
        #expect(try await archive.store([near], of: Self.alice, origin: .spotify) == InsertCounts(inserted: 0, duplicates: 1))
        // A mixed batch: runs of one origin, each seeing the rows before it.
        let later = Scrobble(instant: Self.t + 100_000, artist: "Björk", album: "Homogenic", track: "Jóga")
        let mixed: [(Scrobble, ScrobbleOrigin)] = [(later, .listenBrainz), (Scrobble(instant: Self.t + 100_010, artist: "BJÖRK", album: "", track: "JÓGA"), .spotify)]
        #expect(try await archive.store(mixed, of: Self.alice) == InsertCounts(inserted: 1, duplicates: 1))
        #expect(try await archive.scrobbleCount(of: Username("ALICE")) == 151)
        #expect(try await archive.storedName(of: Username("alice"))?.value == "Alice")
        #expect(try await archive.span(for: Self.alice) == Self.t...(Self.t + 100_000))
        #expect(try await archive.scrobbles(of: Self.alice, from: Self.t + 100_000, to: Self.t + 100_001) == [later])
        // An empty batch leaves no user behind.
        #expect(try await archive.store([], of: Username("nobody"), origin: .spotify) == InsertCounts())
        #expect(try await archive.storedName(of: Username("nobody")) == nil)
    }

    /// A chart page's one read (`chartReading`) says what the separate
    /// questions say: whom the archive holds, their span, their copy and
    /// the chosen week's chart; nothing for a person it does not hold.
    @Test(arguments: Backend.allCases)
    func oneReadAnswersWhatAChartPageAsks(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, bob = try Username("bob")
            let week = ChartWeek(from: Self.t, to: Self.t + 604_800)
            let nobody = try await archive.chartReading(.album, of: bob, withCopy: true) { _ in week }
            #expect(nobody.storedName == nil && nobody.span == nil && nobody.copy == nil && nobody.chart == nil && nobody.generatedThrough == nil)

            let plays = (0..<40).map { Scrobble(instant: Self.t + Int64($0) * 30_000, artist: "A\($0 % 3)", album: "B\($0 % 4)", track: "T") }
            _ = try await archive.store(plays, of: Self.alice, origin: .lastFMSync)
            let queued = try await stores.historyCopies.queue(Self.alice, at: Date(timeIntervalSince1970: 1_700_000_000))
            let chosen = Mutex<ClosedRange<Int64>?>(nil)
            let reading = try await archive.chartReading(.artist, of: Username("ALICE"), withCopy: true) { span in
                chosen.withLock { $0 = span }
                return week
            }
            let span = Self.t...(Self.t + 39 * 30_000)
            #expect(reading.storedName?.value == "Alice")
            #expect(reading.span == span && chosen.withLock { $0 } == span)
            #expect(reading.copy == queued)
            #expect(reading.chart == (try await archive.charts(.artist, of: Self.alice, weeks: [week]))?.first)
            #expect(reading.chart?.entries.isEmpty == false)
            // No copy asked, no week chosen: neither is read.
            let bare = try await archive.chartReading(.album, of: Self.alice, withCopy: false) { _ in nil }
            #expect(bare.copy == nil && bare.chart == nil && bare.span == span && bare.storedName?.value == "Alice")
            // A copy alone, before anything is archived.
            let bobsCopy = try await stores.historyCopies.queue(bob, at: Date(timeIntervalSince1970: 1_700_000_000))
            let copying = try await archive.chartReading(.album, of: bob, withCopy: true) { _ in week }
            #expect(copying.copy == bobsCopy && copying.storedName == nil && copying.chart == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func textSurvivesAsWritten(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.textSurvivesAsWritten(stores.scrobbles) }
    }

    static func textSurvivesAsWritten(_ archive: any ScrobbleArchive) async throws {
        let odd = [
            Scrobble(instant: Self.t, artist: "Tab\there", album: "Back\\slash \\N", track: "New\nline\r",
                     artistMBID: "", albumMBID: nil, trackMBID: "\\."),
            Scrobble(instant: Self.t + 600, artist: "Sigur Rós", album: "( )", track: "Untitled #1 💿", artistMBID: "f3b8"),
        ]
        #expect(try await archive.store(odd, of: Self.alice, origin: .maloja).inserted == 2)
        #expect(try await archive.scrobbles(of: Self.alice, from: 0, to: .max) == odd)
    }

    /// Random listening with case variants and MusicBrainz ids: every
    /// week's chart of every kind equals `ScrobbleTally` over the raw rows.
    @Test(arguments: Backend.allCases)
    func chartsEqualATallyOfTheRawScrobbles(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.chartsEqualATallyOfTheRawScrobbles(stores.scrobbles) }
    }

    static func chartsEqualATallyOfTheRawScrobbles(_ archive: any ScrobbleArchive) async throws {
        var rng = SplitMix64(seed: 7)
        let artists = ["Portishead", "PORTISHEAD", "Björk", "björk", "Mogwai"]
        let albums = ["Dummy", "dummy", "Homogenic", "Young Team", ""]
        var scrobbles: [Scrobble] = []
        var instant = Self.t
        for _ in 0..<3_000 {
            instant += Int64(rng.next() % 7_200) + 61
            let a = Int(rng.next() % 5), b = Int(rng.next() % 5)
            scrobbles.append(Scrobble(instant: instant, artist: artists[a], album: albums[b], track: "Track \(rng.next() % 9)",
                                      artistMBID: rng.next() % 3 == 0 ? "artist-\(a)" : nil,
                                      albumMBID: rng.next() % 4 == 0 ? "album-\(b)-\(rng.next() % 2)" : nil,
                                      trackMBID: rng.next() % 5 == 0 ? "track-\(rng.next() % 3)" : nil))
        }
        #expect(try await archive.store(scrobbles.shuffled(), of: Self.alice, origin: .lastFMExport).inserted == scrobbles.count)
        let source = ArchiveChartSource(store: archive)
        let weeks = try await source.chartList(for: Self.alice).weeks
        #expect(weeks.count > 10)
        for kind in [ChartKind.album, .artist, .track] {
            let charts = try await source.charts(for: Self.alice, kind: kind, weeks: weeks)
            for (week, chart) in zip(weeks, charts) {
                let expected = ScrobbleTally.chart(kind, user: Self.alice, week: week,
                                                   scrobbles: scrobbles.filter { $0.instant >= week.from && $0.instant < week.to })
                #expect(chart == expected, "\(kind) chart of \(week)")
            }
        }
    }

    /// Weekly rollups after random writes of every kind — checked imports
    /// from several sources in random orders, re-imports, sync pages and
    /// unchecked (generated) writes that partly meet stored rows: every
    /// week's chart of every kind equals a tally of the rows stored.
    @Test(arguments: Backend.allCases)
    func rollupChartsEqualATallyOfTheStoredRowsAfterRandomWrites(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            try await Self.rollupChartsEqualATallyOfTheStoredRowsAfterRandomWrites(stores.scrobbles)
        }
    }

    static func rollupChartsEqualATallyOfTheStoredRowsAfterRandomWrites(_ archive: any ScrobbleArchive) async throws {
        var rng = SplitMix64(seed: 23)
        let artists = ["Low", "LOW", "Sigur Rós", "sigur rós", "Can"]
        let albums = ["Things We Lost", "things we lost", "( )", "Tago Mago", ""]
        var all: [Scrobble] = []
        var instant = Self.t
        for _ in 0..<2_500 {
            instant += Int64(rng.next() % 9_000) + 30
            let a = Int(rng.next() % 5), b = Int(rng.next() % 5)
            all.append(Scrobble(instant: instant, artist: artists[a], album: albums[b], track: "Song \(rng.next() % 6)",
                                artistMBID: rng.next() % 3 == 0 ? "artist-\(a)" : nil,
                                albumMBID: rng.next() % 4 == 0 ? "album-\(b)-\(rng.next() % 2)" : nil,
                                trackMBID: rng.next() % 5 == 0 ? "track-\(rng.next() % 3)" : nil))
        }
        let origins: [ScrobbleOrigin] = [.lastFMExport, .listenBrainz, .spotify, .maloja]
        for round in 0..<8 {
            let from = Int(rng.next() % UInt64(all.count)), length = Int(rng.next() % 700) + 1
            let slice = Array(all[from..<min(all.count, from + length)]).shuffled(using: &rng)
            switch round % 3 {
            case 0: try await archive.store(slice, of: Self.alice, origin: origins[Int(rng.next() % 4)])
            case 1: _ = try await archive.storeSyncPage(slice, of: Self.alice, next: nil)
            default: _ = try await archive.storeGenerated(slice, of: Self.alice, through: 0, seed: 1, firstWeek: 0)
            }
        }
        try await archive.store(all, of: Self.alice, origin: .lastFMSync)
        // Everything again: nothing is added, nothing is counted twice.
        #expect(try await archive.store(all.reversed(), of: Self.alice, origin: .spotify).inserted == 0)
        #expect(try await archive.storeGenerated(all, of: Self.alice, through: 0, seed: 1, firstWeek: 0) == 0)
        let source = ArchiveChartSource(store: archive)
        let weeks = try await source.chartList(for: Self.alice).weeks
        #expect(weeks.count > 15)
        for kind in [ChartKind.album, .artist, .track] {
            let charts = try await source.charts(for: Self.alice, kind: kind, weeks: weeks)
            for (week, chart) in zip(weeks, charts) {
                let stored = try await archive.scrobbles(of: Self.alice, from: week.from, to: week.to)
                #expect(chart == ScrobbleTally.chart(kind, user: Self.alice, week: week, scrobbles: stored), "\(kind) chart of \(week)")
            }
        }
    }

    /// Listens received one or a few at a time, mostly after everything
    /// stored (counted into the kept rows), sometimes before (counted
    /// whole), in other spellings and with MusicBrainz ids arriving late:
    /// after each write every week's kept charts equal a tally of its rows.
    @Test(arguments: Backend.allCases)
    func listensReceivedOneAtATimeKeepTheChartsExact(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            try await Self.listensReceivedOneAtATimeKeepTheChartsExact(stores.scrobbles)
        }
    }

    static func listensReceivedOneAtATimeKeepTheChartsExact(_ archive: any ScrobbleArchive) async throws {
        var rng = SplitMix64(seed: 41)
        let artists = ["Low", "LOW", "Can", "Sigur Rós"]
        let albums = ["Things We Lost", "things we lost", "Tago Mago", "", "( )"]
        func listen(at instant: Int64) -> Scrobble {
            let a = Int(rng.next() % 4), b = Int(rng.next() % 5)
            return Scrobble(instant: instant, artist: artists[a], album: albums[b], track: "Song \(rng.next() % 9)",
                            artistMBID: rng.next() % 4 == 0 ? "artist-\(a)" : nil, albumMBID: rng.next() % 4 == 0 ? "album-\(b)-\(rng.next() % 2)" : nil)
        }
        // A week and a half already archived.
        var instant = Self.t
        let base = (0..<120).map { _ in instant += Int64(rng.next() % 3_000) + 60; return listen(at: instant) }
        try await archive.store(base, of: Self.alice, origin: .lastFMExport)
        let source = ArchiveChartSource(store: archive)
        for step in 0..<150 {
            var batch: [Scrobble] = []
            for _ in 0..<(step % 5 == 0 ? 3 : 1) {
                if rng.next() % 8 == 0 {
                    // A late listen, before the newest stored one.
                    batch.append(listen(at: instant - Int64(rng.next() % 20_000) - 1))
                } else {
                    instant += Int64(rng.next() % 1_500) + 200
                    batch.append(listen(at: instant))
                }
            }
            try await archive.store(batch, of: Self.alice, origin: .received)
            guard step % 10 == 9 else { continue }
            let weeks = try await source.chartList(for: Self.alice).weeks
            for kind in [ChartKind.album, .artist] {
                let charts = try await source.charts(for: Self.alice, kind: kind, weeks: weeks)
                for (week, chart) in zip(weeks, charts) {
                    let stored = try await archive.scrobbles(of: Self.alice, from: week.from, to: week.to)
                    #expect(chart == ScrobbleTally.chart(kind, user: Self.alice, week: week, scrobbles: stored), "\(kind) chart of \(week) after step \(step)")
                }
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func aSyncRunIsRecordedUntilItsLastPage(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.aSyncRunIsRecordedUntilItsLastPage(stores.scrobbles) }
    }

    static func aSyncRunIsRecordedUntilItsLastPage(_ archive: any ScrobbleArchive) async throws {
                #expect(try await archive.syncStart(of: Self.alice) == SyncStart())
        // Imports from elsewhere do not say how far Last.fm was copied.
        try await archive.store([Scrobble(instant: Self.t + 9_000, artist: "S", album: "S", track: "S")], of: Self.alice, origin: .spotify)
        try await archive.store([Scrobble(instant: Self.t, artist: "L", album: "L", track: "L")], of: Self.alice, origin: .lastFMExport)
        #expect(try await archive.syncStart(of: Self.alice) == SyncStart(pending: nil, newestFromLastFM: Self.t))
        var state = SyncState(fromInstant: Self.t + 1, toInstant: Self.t + 5_000, nextPage: 2, totalPages: 2, pageSize: 200)
        try await archive.beginSync(state, of: Self.alice)
        #expect(try await archive.syncStart(of: Self.alice).pending == state)
        state.nextPage = 1
        let page = [Scrobble(instant: Self.t + 4_000, artist: "L", album: "L", track: "M")]
        #expect(try await archive.storeSyncPage(page, of: Self.alice, next: state).inserted == 1)
        #expect(try await archive.syncStart(of: Self.alice) == SyncStart(pending: state, newestFromLastFM: Self.t + 4_000))
        #expect(try await archive.storeSyncPage(page, of: Self.alice, next: nil) == InsertCounts(inserted: 0, duplicates: 1))
        #expect(try await archive.syncStart(of: Self.alice).pending == nil)
    }

    @Test(arguments: Backend.allCases)
    func generatedHistoryIsStoredOnceAndResumes(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.generatedHistoryIsStoredOnceAndResumes(stores.scrobbles) }
    }

    static func generatedHistoryIsStoredOnceAndResumes(_ archive: any ScrobbleArchive) async throws {
        let history = DemoHistory(seed: 11, start: 1_293_969_600)
        let generated = GeneratedHistory(history: history, user: Self.alice, store: archive)
        let now = Date(timeIntervalSince1970: 1_293_969_600 + 2 * 365.25 * 86_400)
        let added = try await generated.fill(now: now)
        #expect(added > 1_000)
        #expect(try await generated.fill(now: now) == 0)
        #expect(try await archive.scrobbleCount(of: Self.alice) == added)
        #expect(try await generated.fill(now: now.addingTimeInterval(14 * 86_400)) > 0)
        // Stored exactly as generated: the same rows again add nothing.
        let week = history.chartList(now: Int64(now.timeIntervalSince1970)).weeks[3]
        let again = try await archive.storeGenerated(history.scrobbles(in: week), of: Self.alice, through: week.to,
                                                              seed: 11, firstWeek: history.firstWeek.from)
        #expect(again == 0)
    }

    /// Two writers storing overlapping batches of one person at once (two
    /// instances importing the same export): each listen is stored once.
    @Test(arguments: Backend.allCases)
    func concurrentWritersOfOnePersonStoreEachListenOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.concurrentWritersOfOnePersonStoreEachListenOnce(stores.scrobbles) }
    }

    static func concurrentWritersOfOnePersonStoreEachListenOnce(_ archive: any ScrobbleArchive) async throws {
                let listens = (0..<2_000).map { Scrobble(instant: Self.t + Int64($0) * 120, artist: "A\($0 % 13)", album: "B", track: "T\($0 % 17)") }
        let counts = try await withThrowingTaskGroup(of: InsertCounts.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    var total = InsertCounts()
                    for chunk in stride(from: writer * 100, to: listens.count, by: 500) {
                        total += try await archive.store(Array(listens[chunk..<min(listens.count, chunk + 700)]), of: Self.alice, origin: .listenBrainz)
                    }
                    return total
                }
            }
            return try await group.reduce(InsertCounts()) { $0 + $1 }
        }
        #expect(counts.inserted == listens.count)
        #expect(try await archive.scrobbleCount(of: Self.alice) == listens.count)
        #expect(try await archive.scrobbles(of: Self.alice, from: 0, to: .max) == listens)
    }
}

extension InsertCounts {
    static func + (lhs: InsertCounts, rhs: InsertCounts) -> InsertCounts {
        var sum = lhs
        sum += rhs
        return sum
    }
}

extension ArchiveContractTests {
    /// The history: "Abbey Road" played in 2013 and its reissues'
    /// spellings this year are one album's weeks, and a week with two
    /// editions of "Tidewater" charts one album, the week's first.
    @Test(arguments: Backend.allCases)
    func editionsOfAnAlbumAreOneAlbum(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.editionsOfAnAlbumAreOneAlbum(stores.scrobbles) }
    }

    static func editionsOfAnAlbumAreOneAlbum(_ archive: any ScrobbleArchive) async throws {
        let then: Int64 = 1_370_000_000, now: Int64 = 1_780_000_000
        var scrobbles: [Scrobble] = []
        func play(_ artist: String, _ album: String, _ count: Int, from start: Int64) {
            for n in 0..<count {
                scrobbles.append(Scrobble(instant: start + Int64(n) * 900, artist: artist, album: album, track: "Track \(n % 7)"))
            }
        }
        play("The Beatles", "Abbey Road", 12, from: then)
        play("The Beatles", "Abbey Road (Remastered)", 8, from: now)
        play("The Beatles feat. Billy Preston", "Abbey Road (2019 Mix)", 6, from: now + 604_800)
        play("Vetiver", "Tidewater", 5, from: now + 2 * 604_800)
        play("Vetiver", "Tidewater (Deluxe Edition)", 4, from: now + 2 * 604_800 + 86_400)
        play("Someone Else", "Another Album", 6, from: now + 2 * 604_800 + 2 * 86_400)
        try await archive.store(scrobbles, of: Self.alice, origin: .lastFMExport)

        let weeks = try #require(try await archive.albumWeeks(of: Self.alice, artist: "The Beatles", album: "Abbey Road"))
        #expect(weeks.map(\.plays) == [12, 8, 6])
        #expect(weeks.map(\.name) == ["Abbey Road", "Abbey Road (Remastered)", "Abbey Road (2019 Mix)"])
        // Found by any of its spellings.
        #expect(try await archive.albumWeeks(of: Self.alice, artist: "the beatles", album: "ABBEY ROAD [Super Deluxe Edition]") == weeks)
        let abbeyRoad = try #require(AlbumIdentity.key(artist: "The Beatles", album: "Abbey Road"))
        #expect(try await archive.albumsPlayed(by: Self.alice, since: now - 604_800)?.contains(abbeyRoad) == true)

        let week = LastFMWeekCalendar.week(containing: now + 2 * 604_800)
        let chart = try await ArchiveChartSource(store: archive).chart(for: Self.alice, kind: .album, week: week)
        #expect(chart.entries.map(\.name) == ["Tidewater", "Another Album"])
        #expect(chart.entries.map(\.plays) == [9, 6])
        #expect(chart.entries == ScrobbleTally.chart(.album, user: Self.alice, week: week, scrobbles: scrobbles).entries)

        // What was joined, spelling by spelling.
        let albums = try #require(try await archive.albumSpellings(of: Self.alice))
        #expect(albums.map(\.name) == ["Abbey Road", "Tidewater", "Another Album"])
        #expect(albums.map(\.plays) == [26, 9, 6])
        #expect(albums[0].spellings == [
            SpelledAlbum.Spelling(artist: "The Beatles", album: "Abbey Road", plays: 12),
            SpelledAlbum.Spelling(artist: "The Beatles", album: "Abbey Road (Remastered)", plays: 8),
            SpelledAlbum.Spelling(artist: "The Beatles feat. Billy Preston", album: "Abbey Road (2019 Mix)", plays: 6),
        ])
        #expect(try await archive.albumSpellings(of: try Username("nobody")) == nil)
    }

    /// A person who turns folding off gets back the charts counted by
    /// spelling, exactly, once the job the choice queued has counted them
    /// again; turning it on again folds them again. The choice is kept.
    @Test(arguments: Backend.allCases)
    func foldingOffGivesBackTheChartsBySpellingAndOnAgainFoldsThem(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            try await Self.editionsOfAnAlbumAreOneAlbum(archive)
            let scrobbles = try await archive.scrobbles(of: Self.alice, from: .min, to: .max)
            let weeks = try await ArchiveChartSource(store: archive).chartList(for: Self.alice).weeks.filter { week in
                scrobbles.contains { week.contains($0.instant) }
            }
            func expectCharts(_ folding: AlbumFolding, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                for kind in ChartKind.allCases {
                    let charts = try #require(try await archive.charts(kind, of: Self.alice, weeks: weeks))
                    for (week, chart) in zip(weeks, charts) {
                        let counted = ScrobbleTally.Tally(kind: kind, folding: folding)
                        var tally = counted
                        for s in scrobbles.sorted(by: WeeklyRollup.canonicalOrder) where week.contains(s.instant) { tally.add(s) }
                        #expect(chart.entries == tally.ranked(), "\(kind) of \(week)", sourceLocation: sourceLocation)
                    }
                }
            }
            func countAgain() async throws {
                while try await archive.countAgain(Self.alice, under: nil, at: Date(timeIntervalSince1970: 1_780_000_000)) {}
            }
            #expect(try await archive.albumFolding(of: Self.alice) == .editions)
            #expect(try await archive.chooseAlbumFolding(.asSpelled, of: Self.alice, at: Date(timeIntervalSince1970: 1_780_000_000)))
            #expect(try await !archive.chooseAlbumFolding(.asSpelled, of: Self.alice, at: Date(timeIntervalSince1970: 1_780_000_000)))
            #expect(try await archive.albumFolding(of: Self.alice) == .asSpelled)
            // Queued with the choice, once.
            let job = try #require(try await stores.jobs.claim(.albumFolding, key: Self.alice.key, as: "test",
                                                                at: Date(timeIntervalSince1970: 1_780_000_000), lease: 60) { _ in false })
            #expect(job.job.person == Self.alice.key)
            try await countAgain()
            try await expectCharts(.asSpelled)
            let asSpelled = try #require(try await archive.albumWeeks(of: Self.alice, artist: "The Beatles", album: "Abbey Road"))
            #expect(asSpelled.map(\.plays) == [12])
            #expect(try await archive.albumWeeks(of: Self.alice, artist: "The Beatles", album: "ABBEY ROAD (REMASTERED)")?.map(\.plays) == [8])

            #expect(try await archive.chooseAlbumFolding(.editions, of: Self.alice, at: Date(timeIntervalSince1970: 1_780_000_100)))
            try await countAgain()
            try await expectCharts(.editions)
            #expect(try await archive.albumWeeks(of: Self.alice, artist: "The Beatles", album: "Abbey Road")?.map(\.plays) == [12, 8, 6])
            // Someone without an archive may choose too; nothing is queued.
            let nobody = try Username("NotArchived")
            #expect(try await archive.chooseAlbumFolding(.asSpelled, of: nobody, at: Date(timeIntervalSince1970: 1_780_000_000)))
            #expect(try await archive.albumFolding(of: nobody) == .asSpelled)
            #expect(try await stores.jobs.claim(.albumFolding, key: nobody.key, as: "test",
                                                at: Date(timeIntervalSince1970: 1_780_000_000), lease: 60) { _ in false } == nil)
        }
    }

    /// An album's weeks, whatever the case it is spelled in: the plays of
    /// every spelling, week by week, from the rollups' album index.
    @Test(arguments: Backend.allCases)
    func anAlbumsWeeksGatherEverySpelling(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in try await Self.anAlbumsWeeksGatherEverySpelling(stores.scrobbles) }
    }

    static func anAlbumsWeeksGatherEverySpelling(_ archive: any ScrobbleArchive) async throws {
        #expect(try await archive.albumWeeks(of: Self.alice, artist: "Björk", album: "Homogenic") == nil)
        let spellings = [("Björk", "Homogenic"), ("BJÖRK", "homogenic"), ("björk", "HOMOGENIC")]
        var scrobbles: [Scrobble] = []
        for n in 0..<90 {
            let (artist, album) = spellings[n % 3]
            // Three plays a week for thirty weeks, skipping every fifth week.
            let week = Int64(n / 3) * 604_800
            guard (n / 3) % 5 != 4 else { continue }
            scrobbles.append(Scrobble(instant: Self.t + week + Int64(n % 3) * 600, artist: artist, album: album, track: "Jóga \(n % 3)"))
        }
        scrobbles.append(Scrobble(instant: Self.t + 5, artist: "Björk", album: "Post", track: "Hyperballad"))
        try await archive.store(scrobbles, of: Self.alice, origin: .lastFMExport)
        let weeks = try #require(try await archive.albumWeeks(of: Self.alice, artist: "bjÖrk", album: "homoGENIC"))
        let expected = ScrobbleTally.albumWeeks(artist: "Björk", album: "Homogenic", in: scrobbles)
        #expect(weeks == expected)
        #expect(weeks.count == 24)
        #expect(weeks.allSatisfy { $0.plays == 3 && $0.rank == 1 && $0.artist == "BJÖRK" && $0.name == "homogenic" })
        // Played since the tenth week: only Homogenic (Post was in the first).
        let homogenic = try #require(AlbumIdentity.key(artist: "Björk", album: "Homogenic"))
        let post = try #require(AlbumIdentity.key(artist: "Björk", album: "Post"))
        #expect(try await archive.albumsPlayed(by: Self.alice, since: weeks[9].week.from) == [homogenic])
        #expect(try await archive.albumsPlayed(by: Self.alice, since: 0) == [homogenic, post])
        #expect(try await archive.albumsPlayed(by: try Username("nobody"), since: 0) == nil)
        #expect(try await archive.albumWeeks(of: Self.alice, artist: "Björk", album: "Debut") == [])
        #expect(try await archive.albumWeeks(of: Self.alice, artist: "Björk", album: "") == [])
    }
}
