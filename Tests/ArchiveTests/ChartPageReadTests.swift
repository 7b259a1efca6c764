import Foundation
import GRDB
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
@testable import Sync
import Stores

/// A cold chart page of an archived person costs one read of the archive:
/// the person, their span, their copy and the week's rows together
/// (`ArchiveReading.chartReading`), and the page it makes is the page
/// the separate questions make.
@Suite struct ChartPageReadTests {
    /// The archive, counting what it is asked.
    final class CountingArchive: ScrobbleArchive {
        let store: any ScrobbleArchive
        let asked = Mutex<[String]>([])

        init(store: any ScrobbleArchive) { self.store = store }

        var questions: [String] { asked.withLock { $0 } }
        func note(_ question: String) { asked.withLock { $0.append(question) } }

        func storedName(of user: Username) async throws(SourceError) -> Username? {
            note("storedName"); return try await store.storedName(of: user)
        }
        func span(for user: Username) async throws(SourceError) -> ClosedRange<Int64>? {
            note("span"); return try await store.span(for: user)
        }
        func scrobbleCount(of user: Username) async throws(SourceError) -> Int {
            note("scrobbleCount"); return try await store.scrobbleCount(of: user)
        }
        func scrobbles(of user: Username, from: Int64, to: Int64) async throws(SourceError) -> [Scrobble] {
            note("scrobbles"); return try await store.scrobbles(of: user, from: from, to: to)
        }
        func recentScrobbles(of user: Username, from: Int64, to: Int64, limit: Int, offset: Int) async throws(SourceError) -> RecentScrobbles {
            note("recentScrobbles"); return try await store.recentScrobbles(of: user, from: from, to: to, limit: limit, offset: offset)
        }
        func charts(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart]? {
            note("charts"); return try await store.charts(kind, of: user, weeks: weeks)
        }
        func chartReading(_ kind: ChartKind, of user: Username, withCopy: Bool,
                          choosing choose: @escaping @Sendable (ClosedRange<Int64>) -> ChartWeek?) async throws(SourceError) -> ChartReading {
            note("chartReading"); return try await store.chartReading(kind, of: user, withCopy: withCopy, choosing: choose)
        }
        func albumWeeks(of user: Username, artist: String, album name: String) async throws(SourceError) -> [AlbumWeek]? {
            note("albumWeeks"); return try await store.albumWeeks(of: user, artist: artist, album: name)
        }
        func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>? {
            note("albumsPlayed"); return try await store.albumsPlayed(by: user, since: from)
        }
        func albumsCharted(of user: Username, lifeOf: Set<ChartWeek>, around: [[ChartWeek]], inAtLeast: Int) async throws(SourceError) -> [ChartedAlbum]? {
            note("albumsCharted"); return try await store.albumsCharted(of: user, lifeOf: lifeOf, around: around, inAtLeast: inAtLeast)
        }
        func yearListening(of user: Username, in year: ListeningYear) async throws(SourceError) -> YearListening? {
            note("yearListening"); return try await store.yearListening(of: user, in: year)
        }
        func albumSpellings(of user: Username) async throws(SourceError) -> [SpelledAlbum]? {
            note("albumSpellings"); return try await store.albumSpellings(of: user)
        }
        func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding {
            note("albumFolding"); return try await store.albumFolding(of: user)
        }
        func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
            try await store.chooseAlbumFolding(folding, of: user, at: now, fence: fence)
        }
        func albumSpellings(of user: Username, artist: String, album: String) async throws(SourceError) -> SpelledAlbum? {
            note("albumSpellings"); return try await store.albumSpellings(of: user, artist: artist, album: album)
        }
        func albumChoices(of user: Username) async throws(SourceError) -> [AlbumChoice] {
            note("albumChoices"); return try await store.albumChoices(of: user)
        }
        func changeAlbums(_ change: AlbumChoiceChange, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool {
            try await store.changeAlbums(change, of: user, at: now, fence: fence)
        }
        func countAgain(_ user: Username, under claim: JobClaim?, at now: Date) async throws(SourceError) -> Bool {
            try await store.countAgain(user, under: claim, at: now)
        }
        func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) async throws(SourceError) -> InsertCounts {
            try await store.store(batch, of: user, fence: fence)
        }
        func syncStart(of user: Username) async throws(SourceError) -> SyncStart { try await store.syncStart(of: user) }
        func beginSync(_ state: SyncState, of user: Username, fence: JobFence?) async throws(SourceError) {
            try await store.beginSync(state, of: user, fence: fence)
        }
        func storeSyncPage(_ scrobbles: [Scrobble], of user: Username, next: SyncState?, fence: JobFence?) async throws(SourceError) -> InsertCounts {
            try await store.storeSyncPage(scrobbles, of: user, next: next, fence: fence)
        }
        func forgetCopy(of user: Username) async throws(SourceError) -> Int { try await store.forgetCopy(of: user) }
        func generatedThrough(of user: Username) async throws(SourceError) -> Int64? {
            note("generatedThrough"); return try await store.generatedThrough(of: user)
        }
        func storeGenerated(_ scrobbles: [Scrobble], of user: Username, through: Int64, seed: Int64,
                            firstWeek: Int64) async throws(SourceError) -> Int {
            try await store.storeGenerated(scrobbles, of: user, through: through, seed: seed, firstWeek: firstWeek)
        }
        func importFinished(inserted: Int) async throws(SourceError) { try await store.importFinished(inserted: inserted) }
    }

    /// History copies as the pages see them, counting reads of their own.
    final class CountingCopies: HistoryCopyRequests {
        let store: any HistoryCopyStore
        let clock: WallClock
        let reads = Mutex(0)
        let seen = Mutex<[HistoryCopy?]>([])

        init(store: any HistoryCopyStore, clock: WallClock) {
            self.store = store
            self.clock = clock
        }

        func viewed(_ user: Username) async -> HistoryCopy? {
            reads.withLock { $0 += 1 }
            return await viewed(user, standing: try? await store.copy(of: user))
        }
        func viewed(_ user: Username, standing current: HistoryCopy?) async -> HistoryCopy? {
            seen.withLock { $0.append(current) }
            return current
        }
        func failure(of user: Username) -> SourceError? { nil }
        func secondsLeft(_ copy: HistoryCopy) -> TimeInterval? { nil }
    }

    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aColdChartPageIsOneReadOfTheArchive() async throws {
        let directory = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: directory.url)
        let store = SQLiteScrobbleStore(database: database), copyStore = SQLiteHistoryCopyStore(database)
        let (scrobbles, weeks) = ArchiveChartTests.madeUpExport()
        let alice = try Username("Alice")
        _ = try await store.store(scrobbles, of: alice, origin: .lastFMExport)
        let copy = try await copyStore.queue(alice, at: Self.now)
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE history_copy SET state = 'done', done_at = ? WHERE name_key = ?",
                           arguments: [Self.now.timeIntervalSince1970, alice.key])
        }
        let done = try await copyStore.copy(of: alice)
        #expect(done?.state == .done && copy.state == .queued)

        let archive = CountingArchive(store: store)
        let copies = CountingCopies(store: copyStore, clock: .fixed(Self.now))
        let demo = DemoChartSource(clock: .fixed(Self.now))
        let sources = ListeningSources(archive: archive, demo: nil, lastFM: demo, copies: copies)
        for kind in ChartKind.allCases {
            for week in [weeks[3], weeks[9]] {
                let request = WeeklyChartPage.Request(user: alice, kind: kind, selection: .containing(Date(timeIntervalSince1970: Double(week.from + 3_600))))
                archive.asked.withLock { $0 = [] }
                let (page, chosen) = await sources.chartPage(request, now: Self.now)
                #expect(archive.questions == ["chartReading"], "a cold \(kind) page read \(archive.questions)")
                #expect(chosen.origin == .archive && chosen.copy?.state == .done)
                // The same page as the separate questions make.
                let separately = await WeeklyChartPage.load(request, from: ArchiveChartSource(store: store), now: Self.now)
                #expect(page.state == .chart && page.week == week)
                #expect(page.rows == separately.rows && page.week == separately.week && page.title == separately.title)
                #expect(page.previous == separately.previous && page.next == separately.next && page.hiddenCount == separately.hiddenCount)
                #expect(!page.rows.isEmpty)
            }
        }
        // Outside the history: no chart, the same one read.
        archive.asked.withLock { $0 = [] }
        let before = WeeklyChartPage.Request(user: alice, selection: .containing(Date(timeIntervalSince1970: 1_000_000_000)))
        let (outside, _) = await sources.chartPage(before, now: Self.now)
        let separately = await WeeklyChartPage.load(before, from: ArchiveChartSource(store: store), now: Self.now)
        #expect(archive.questions == ["chartReading"])
        #expect(outside.state == separately.state && outside.rows.isEmpty)
        // The copy came with the read: the copies never read it themselves.
        #expect(copies.reads.withLock { $0 } == 0)
        #expect(copies.seen.withLock { $0 }.allSatisfy { $0?.state == .done })
    }

    /// Someone the archive does not hold: the read says so, and the page
    /// comes from Last.fm with the copy the read found (a first one running).
    @Test func aPersonNotArchivedIsChartedElsewhereAfterTheSameRead() async throws {
        let directory = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: directory.url)
        let store = SQLiteScrobbleStore(database: database), copyStore = SQLiteHistoryCopyStore(database)
        let mika = try Username("Mika")
        _ = try await copyStore.queue(mika, at: Self.now)
        let archive = CountingArchive(store: store)
        let copies = CountingCopies(store: copyStore, clock: .fixed(Self.now))
        let demo = DemoChartSource(clock: .fixed(Self.now))
        let sources = ListeningSources(archive: archive, demo: nil, lastFM: demo, copies: copies)
        let (page, chosen) = await sources.chartPage(WeeklyChartPage.Request(user: mika), now: Self.now)
        #expect(chosen.origin == .lastfm && chosen.copy?.state == .queued)
        #expect(archive.questions == ["chartReading"])
        #expect(copies.reads.withLock { $0 } == 0)
        // Last.fm (here the demo standing in for it) answered: it does not know Mika.
        #expect(page.failure != nil)
    }
}
