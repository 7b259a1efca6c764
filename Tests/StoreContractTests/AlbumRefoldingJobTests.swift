import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import Sync
import Workers

/// The album count job (`JobKind.albumFolding`, `AlbumRefolding`) on both
/// stores: deleting the account between two slices stops it and keeps
/// nothing of the person; a run whose worker died midway is taken over and
/// leaves the charts a whole count gives.
@Suite struct AlbumRefoldingJobTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    /// 80 weeks (more than three slices) of two editions of one album and another album.
    static func history() -> [Scrobble] {
        var scrobbles: [Scrobble] = []
        for week in 0..<80 {
            let start: Int64 = 1_700_000_000 + Int64(week) * 604_800
            for n in 0..<3 { scrobbles.append(Scrobble(instant: start + Int64(n) * 600, artist: "Vetiver", album: "Tidewater", track: "T\(n)")) }
            for n in 0..<2 {
                scrobbles.append(Scrobble(instant: start + 7_200 + Int64(n) * 600, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "D\(n)"))
            }
            scrobbles.append(Scrobble(instant: start + 9_000, artist: "Low", album: "HEY WHAT", track: "White Horses"))
        }
        return scrobbles
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func deletingTheAccountBetweenTwoSlicesStopsTheCountAndKeepsNothing(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.now)
            try await archive.store(Self.history(), of: zeb, origin: .lastFMExport)
            #expect(try await archive.chooseAlbumFolding(.asSpelled, of: zeb, at: Self.now))
            let claim = try #require(try await stores.jobs.claimNext(of: [.albumFolding], on: "m", as: "counter", at: Self.now, lease: 600,
                                                                     takingOverFrom: { _ in false }))
            #expect(claim.job.person == zeb.key)
            #expect(try await archive.countAgain(zeb, under: claim, at: Self.now), "more than one slice to count")
            _ = try await eraser.erase(account)
            await #expect(throws: SourceError.self) { _ = try await archive.countAgain(zeb, under: claim, at: Self.now) }
            // The handler, run on the claim now, ends without writing.
            let refolding = AlbumRefolding(choices: archive, clock: .fixed(Self.now), wakeup: Wakeup())
            #expect(await refolding.run(claim) == .done)
            let left = try await dump().filter { $0.value.lowercased() == "zebulon42" || $0.value.contains("Tidewater") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
            #expect(try await archive.scrobbleCount(of: zeb) == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aCountWhoseWorkerDiedIsTakenOverAndEndsAsAWholeCount(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let ana = try Username("ana"), archive = stores.scrobbles
            let history = Self.history()
            try await archive.store(history, of: ana, origin: .lastFMExport)
            #expect(try await archive.chooseAlbumFolding(.asSpelled, of: ana, at: Self.now))
            // A worker claims it, counts one slice, and dies.
            let dead = try #require(try await stores.jobs.claimNext(of: [.albumFolding], on: "m", as: "m/1/dead", at: Self.now, lease: 600,
                                                                    takingOverFrom: { _ in false }))
            #expect(try await archive.countAgain(ana, under: dead, at: Self.now))
            // Another takes it over (its holder is gone) and runs it whole.
            let claim = try #require(try await stores.jobs.claimNext(of: [.albumFolding], on: "m", as: "m/2/alive", at: Self.now, lease: 600,
                                                                     takingOverFrom: { $0 == "m/1/dead" }))
            #expect(claim.job.id == dead.job.id)
            let refolding = AlbumRefolding(choices: archive, clock: .fixed(Self.now), wakeup: Wakeup())
            #expect(await refolding.run(claim) == .done)
            // The slice that found no week left ended the job in its transaction.
            #expect(try await stores.jobs.job(claim.job.id)?.state == .done)
            #expect(try await !stores.jobs.end(claim, as: .done, at: Self.now))
            // The dead worker's fence no longer holds.
            await #expect(throws: SourceError.self) { _ = try await archive.countAgain(ana, under: dead, at: Self.now) }
            let weeks = try await ArchiveChartSource(store: archive).chartList(for: ana).weeks.filter { week in
                history.contains { week.contains($0.instant) }
            }
            #expect(weeks.count == 80)
            let charts = try #require(try await archive.charts(.album, of: ana, weeks: weeks))
            for (week, chart) in zip(weeks, charts) {
                var tally = ScrobbleTally.Tally(kind: .album, folding: .asSpelled)
                for s in history.sorted(by: WeeklyRollup.canonicalOrder) where week.contains(s.instant) { tally.add(s) }
                #expect(chart.entries == tally.ranked(), "\(week)")
            }
        }
    }
}
