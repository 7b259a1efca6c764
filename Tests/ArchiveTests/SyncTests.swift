import AsyncHTTPClient
import Foundation
import LastFM
import LastFMTestServer
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

@Suite struct SyncTests {
    static let rj = try! Username("rj")
    /// The fake's `rj` history starts 1 January 2006; stop the clock about
    /// four months later so the history is small and bounded.
    static let now = Date(timeIntervalSince1970: 1_136_073_600 + 120 * 86_400)
    static let history = DemoHistory(seed: 7, start: 1_136_073_600)

    /// Every scrobble the fake holds for `rj` up to `now`.
    static func expected(until end: Int64) -> [Scrobble] {
        LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: end + LastFMWeekCalendar.weekLength)
            .flatMap { history.scrobbles(in: $0) }
            .filter { $0.instant <= end }
    }

    /// Runs `body` with a sync against a fake Last.fm over real HTTP.
    static func withSync(_ store: SQLiteScrobbleStore, clock: WallClock,
                         _ body: @Sendable (FakeLastFM, ScrobbleSync) async throws -> Void) async throws {
        let fake = try FakeLastFM(clock: clock)
        let http = LastFMTransport.makeHTTPClient()
        do {
            try await FakeLastFMServer.withRunning(fake) { url in
                let configuration = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 50, retryBaseDelay: .milliseconds(10))
                let client = LastFMClient(configuration: configuration, transport: .live(http), clock: clock)
                let gateway = RecentTracksGateway { user, from, to, page, limit throws(SourceError) in
                    try await client.recentTracks(of: user, from: from, to: to, page: page, limit: limit)
                }
                try await body(fake, ScrobbleSync(store: store, gateway: gateway, clock: clock))
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    @Test func syncInterruptedMidwayResumesWithoutHolesOrDuplicates() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let clock = WallClock.fixed(Self.now)
        let end = Int64(Self.now.timeIntervalSince1970)
        let expected = Self.expected(until: end)
        #expect(expected.count > 1_000)

        try await Self.withSync(store, clock: clock) { fake, sync in
            // Last.fm fails (error 11, every retry) once three pages are in.
            let failure = try await { () async throws -> SourceError? in
                do {
                    _ = try await sync.sync(Self.rj) { progress in
                        if progress.pagesDone == 3 {
                            await fake.inject(.init(.apiError(code: 11, status: 503), method: "user.getrecenttracks", times: 3))
                        }
                    }
                    return nil
                } catch let error as SourceError {
                    return error
                }
            }()
            #expect(failure?.isTemporary == true)
            let pending = try #require(try await sync.pending(for: Self.rj))
            #expect(pending.toInstant == end && pending.fromInstant == 0)
            #expect(pending.nextPage == pending.totalPages - 3)
            // The oldest three pages are in (the last page is the short one),
            // and exactly the oldest scrobbles: no hole behind the sync.
            let lastPage = expected.count - (pending.totalPages - 1) * 200
            let partial = try await store.scrobbles(of: Self.rj, from: 0, to: .max)
            #expect(partial.count == lastPage + 400)
            #expect(Set(partial) == Set(expected.prefix(lastPage + 400)))

            // The rest, resumed where it stopped.
            await fake.clearLog()
            let resumed = try await sync.sync(Self.rj)
            #expect(resumed.resumed)
            #expect(resumed.pages == pending.totalPages - 3)
            #expect(resumed.duplicates == 0)
            #expect(try await sync.pending(for: Self.rj) == nil)
            let requests = await fake.requests().filter { $0.method == "user.getrecenttracks" }
            #expect(requests.allSatisfy { $0.parameters["to"] == String(end) && $0.parameters["from"] == "0" })

            let archived = try await store.scrobbles(of: Self.rj, from: 0, to: .max)
            #expect(archived.count == expected.count)
            #expect(Set(archived) == Set(expected))

            // Nothing new: it looks again only at the two weeks before the
            // newest archived scrobble (Last.fm's window for late scrobbles).
            await fake.clearLog()
            let again = try await sync.sync(Self.rj)
            #expect(again.imported == 0)
            let from = expected.map(\.instant).max()! + 1 - 14 * 86_400
            #expect(again.duplicates == expected.filter { $0.instant >= from }.count)
            let last = await fake.requests().filter { $0.method == "user.getrecenttracks" }
            #expect(last.allSatisfy { $0.parameters["from"] == String(from) })
            #expect(last.count == (again.duplicates + 199) / 200)
        }
    }

    @Test func laterSyncFetchesOnlyNewScrobbles() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        // A newer play imported from Spotify must not move the sync's start.
        try await store.store([Scrobble(instant: Int64(Self.now.timeIntervalSince1970) - 10, artist: "S", album: "S", track: "S")],
                              of: Self.rj, origin: .spotify)
        let early = Date(timeIntervalSince1970: 1_136_073_600 + 40 * 86_400)
        try await Self.withSync(store, clock: .fixed(early)) { _, sync in
            let first = try await sync.sync(Self.rj)
            #expect(first.imported == Self.expected(until: Int64(early.timeIntervalSince1970)).count)
        }
        let firstNewest = Self.expected(until: Int64(early.timeIntervalSince1970)).map(\.instant).max()!
        try await Self.withSync(store, clock: .fixed(Self.now)) { _, sync in
            let second = try await sync.sync(Self.rj)
            // Only the late-scrobble window is seen again.
            #expect(second.duplicates == Self.expected(until: firstNewest).filter { $0.instant > firstNewest - 14 * 86_400 }.count)
            #expect(second.imported > 0)
        }
        let expected = Self.expected(until: Int64(Self.now.timeIntervalSince1970))
        #expect(try await store.scrobbleCount(of: Self.rj) == expected.count + 1)
        // The archive's chart of a synced week equals Last.fm's (the fake's) semantics.
        let week = LastFMWeekCalendar.week(containing: 1_136_073_600 + 60 * 86_400)
        let chart = try await ArchiveChartSource(store: store).chart(for: Self.rj, kind: .album, week: week)
        #expect(chart == ScrobbleTally.chart(.album, user: Self.rj, week: week, scrobbles: expected))
    }

    /// A scrobble submitted days late, older than the newest one archived,
    /// is picked up by the next sync (it used to be skipped for good).
    @Test func aLateScrobbleIsPickedUpByTheNextSync() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let clock = WallClock.fixed(Self.now)
        let end = Int64(Self.now.timeIntervalSince1970)
        try await Self.withSync(store, clock: clock) { fake, sync in
            _ = try await sync.sync(Self.rj)
            let before = try await store.scrobbleCount(of: Self.rj)
            #expect(before == Self.expected(until: end).count)
            // Played offline five days ago, submitted only now.
            let late = Scrobble(instant: end - 5 * 86_400 + 17, artist: "The Offline Band", album: "Airplane Mode", track: "Roaming")
            await fake.scrobbleLate(late, for: "rj")
            let next = try await sync.sync(Self.rj)
            #expect(next.imported == 1)
            #expect(try await store.scrobbleCount(of: Self.rj) == before + 1)
            #expect(try await store.scrobbles(of: Self.rj, from: late.instant, to: late.instant + 1).map(\.artist).contains("The Offline Band"))
        }
    }

    /// A name Last.fm does not know fails with "not found" and leaves nothing
    /// behind: an empty archive would otherwise shadow the user's charts.
    /// The duplicate rule applies to the sync too: plays already imported
    /// from ListenBrainz (a few seconds off, in other casing) are not
    /// stored again when the same plays come from Last.fm.
    @Test func aSyncAfterAListenBrainzImportStoresEachPlayOnce() async throws {
        let dir = try TemporaryDirectory()
        let clock = WallClock.fixed(Self.now)
        let end = Int64(Self.now.timeIntervalSince1970)
        let expected = Self.expected(until: end)
        let listens = expected.prefix(300).map { s in
            listenLine(s.instant + 4, s.artist.uppercased(), s.track.lowercased(), album: s.album)
        }
        let file = try dir.file("listens.jsonl", listens.joined(separator: "\n"))
        let both = try dir.store("both"), syncOnly = try dir.store("sync-only")
        let imported = try ScrobbleImporter(store: both, clock: clock).importFile(at: file, for: Self.rj)
        #expect(imported.imported > 250)
        try await Self.withSync(both, clock: clock) { _, sync in
            let summary = try await sync.sync(Self.rj)
            #expect(summary.duplicates >= imported.imported)
        }
        try await Self.withSync(syncOnly, clock: clock) { _, sync in _ = try await sync.sync(Self.rj) }
        #expect(try await both.scrobbleCount(of: Self.rj) == syncOnly.scrobbleCount(of: Self.rj))
    }

    @Test func anUnknownUserLeavesNoArchiveBehind() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let typo = try Username("rjj")
        try await Self.withSync(store, clock: .fixed(Self.now)) { _, sync in
            await #expect(throws: SourceError.notFound(what: "The user “rjj”")) { try await sync.sync(typo) }
        }
        #expect(try store.userID(of: typo) == nil)
    }
}
