import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// A sync of an `lb:` user (`ScrobbleSync` with `ListenBrainzHistory`)
/// against the local ListenBrainz over real HTTP, into SQLite and
/// PostgreSQL: complete, resumable after an interruption, incremental, and
/// without holes or duplicates.
@Suite struct ListenBrainzSyncContractTests {
    typealias Backend = StoreContractTests.Backend

    static let carol = try! Username("lb:carol")
    /// 2020-06-01; carol's history starts 12 weeks before.
    static let now = Date(timeIntervalSince1970: 1_590_969_600)
    static let history = DemoHistory(seed: 31, start: 1_590_969_600 - 12 * 604_800)

    /// Every listen the fake holds for carol, as the archive should hold them.
    static func expected() -> Set<Scrobble> {
        let end = Int64(now.timeIntervalSince1970)
        return Set(LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: end + LastFMWeekCalendar.weekLength)
            .flatMap { history.scrobbles(in: $0) }
            .filter { $0.instant <= end }
            .map { Scrobble(instant: $0.instant, artist: $0.artist, album: $0.album, track: $0.track, albumMBID: $0.albumMBID) })
    }

    static func archived(_ archive: any ScrobbleArchive) async throws -> [Scrobble] {
        try await archive.scrobbles(of: carol, from: 0, to: .max)
    }

    /// Runs `body` with a fake ListenBrainz holding carol and a sync of
    /// windows of 100 listens into `archive`.
    static func withSync(_ archive: any ScrobbleArchive,
                         _ body: @Sendable (FakeListenBrainz, ScrobbleSync) async throws -> Void) async throws {
        let fake = FakeListenBrainz(clock: .fixed(now))
        await fake.add(user: "carol", history: history)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await FakeListenBrainzServer.withRunning(fake) { root in
                let client = ListenBrainzClient(
                    configuration: .init(apiRoot: root, timeout: .seconds(10), attempts: 2, backoff: .milliseconds(5)), http: http)
                let upstream = ListenBrainzHistory { user, minTs, maxTs, count throws(SourceError) in
                    try await client.window(of: user, minTs: minTs, maxTs: maxTs, count: count)
                }
                try await body(fake, ScrobbleSync(store: archive, upstream: upstream, clock: .fixed(now), pageSize: 100))
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    @Test(arguments: Backend.allCases)
    func aSyncCopiesEveryListenOnceAndThenOnlyWhatIsNew(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            let expected = Self.expected()
            #expect(expected.count > 300)
            try await Self.withSync(archive) { fake, sync in
                let summary = try await sync.sync(Self.carol)
                #expect(summary.imported == expected.count)
                // Windows of 100, each after the first asking again for the
                // second it was cut at.
                #expect(summary.pages >= (expected.count + 99) / 100 && summary.pages <= (expected.count + 98) / 99 + 1)
                #expect(!summary.resumed)
                let stored = try await Self.archived(archive)
                #expect(stored.count == expected.count)
                #expect(Set(stored) == expected)
                #expect(try await sync.pending(for: Self.carol) == nil)
                // Stored as ListenBrainz's copies, which is where the next sync starts.
                let newest = try #require(expected.map(\.instant).max())
                #expect(try await archive.syncStart(of: Self.carol).newestFromLastFM == newest)

                // A listen sent late (five days before the newest) and one
                // just before now: the next sync asks only for the last two
                // weeks and stores only those two.
                let late = FakeListenBrainz.Listen(listenedAt: newest - 5 * 86_400 + 7, artist: "Late Artist", track: "Offline Track",
                                                   release: "Late Album")
                let recent = FakeListenBrainz.Listen(listenedAt: Int64(Self.now.timeIntervalSince1970) - 30, artist: "New Artist",
                                                     track: "Just Now", release: "New Album")
                await fake.addListens([late, recent], to: "carol")
                await fake.clearLog()
                let again = try await sync.sync(Self.carol)
                #expect(again.imported == 2)
                let windowStart = newest + 1 - 14 * 86_400
                let asked = await fake.requests()
                #expect(!asked.isEmpty && asked.allSatisfy { $0.query["min_ts"] == String(windowStart - 1) })
                #expect(try await Self.archived(archive).count == expected.count + 2)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func anInterruptedSyncResumesWithoutHolesOrDuplicates(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            let expected = Self.expected()
            try await Self.withSync(archive) { fake, sync in
                // ListenBrainz fails for good once three windows are in.
                let failure = await { () async -> SourceError? in
                    do {
                        _ = try await sync.sync(Self.carol) { progress in
                            if progress.pagesDone == 3 { await fake.inject(.init(.httpStatus(503), endpoint: "listens")) }
                        }
                        return nil
                    } catch { return error as? SourceError }
                }()
                #expect(failure == .listenBrainz(.unavailable(status: 503)))
                let pending = try #require(try await sync.pending(for: Self.carol))
                #expect(pending.totalPages == 0 && pending.nextPage == 4)
                #expect(pending.fromInstant == 0)
                // The newest 300 listens (less the boundary seconds asked
                // twice) are in, and nothing older: no hole behind the walk.
                let partial = try await Self.archived(archive)
                #expect(partial.count >= 297 && partial.count <= 300)
                #expect(partial.allSatisfy { $0.instant >= pending.toInstant })
                #expect(Set(partial) == Set(expected.filter { $0.instant >= pending.toInstant }))

                await fake.clearFaults()
                let resumed = try await sync.sync(Self.carol)
                #expect(resumed.resumed)
                #expect(try await sync.pending(for: Self.carol) == nil)
                let stored = try await Self.archived(archive)
                #expect(stored.count == expected.count)
                #expect(Set(stored) == expected)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func anUnknownUserStoresNothing(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            try await Self.withSync(stores.scrobbles) { _, sync in
                let nobody = try Username("lb:nobody")
                let failure = await { () async -> SourceError? in
                    do { _ = try await sync.sync(nobody); return nil } catch { return error as? SourceError }
                }()
                #expect(failure == .listenBrainz(.userNotFound(user: "nobody")))
                #expect(try await stores.scrobbles.storedName(of: nobody) == nil)
                #expect(try await sync.pending(for: nobody) == nil)
            }
        }
    }
}
