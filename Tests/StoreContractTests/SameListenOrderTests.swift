import Foundation
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The duplicate rule gives the same archive for the same listens, whatever
/// their order, batching or way in (issue 27: the same track at t, t+50 and
/// t+100 was 2 plays as one import and sent in time order, but 1 when sent
/// as t+50, t, t+100). Run against SQLite and PostgreSQL.
@Suite struct SameListenOrderTests {
    typealias Backend = StoreContractTests.Backend
    static let t: Int64 = 1_600_000_000

    static func rows(_ archive: any ScrobbleArchive, _ user: Username) async throws -> [Scrobble] {
        try await archive.scrobbles(of: user, from: 0, to: .max)
    }

    @Test(arguments: Backend.allCases)
    func threeCopiesAMinuteApartAreTwoPlaysInEveryOrder(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            let play = { (offset: Int64) in Scrobble(instant: Self.t + offset, artist: "Low", album: "Things We Lost in the Fire", track: "Sunflower") }
            let orders: [[Int64]] = [[0, 50, 100], [100, 50, 0], [50, 0, 100], [50, 100, 0], [0, 100, 50], [100, 0, 50]]
            var kept: [[Scrobble]] = []
            for (n, order) in orders.enumerated() {
                let user = try Username("single\(n)")
                for offset in order { _ = try await archive.store([play(offset)], of: user, origin: .received) }
                kept.append(try await Self.rows(archive, user))
            }
            let imported = try Username("imported")
            #expect(try await archive.store([play(50), play(100), play(0)], of: imported, origin: .lastFMExport) == InsertCounts(inserted: 2, duplicates: 1))
            let expected = try await Self.rows(archive, imported)
            #expect(expected == [play(0), play(100)])
            for (order, rows) in zip(orders, kept) { #expect(rows == expected, "sent as \(order)") }
            // The week's chart counts the two, whichever order made them.
            let week = LastFMWeekCalendar.week(containing: Self.t)
            for n in orders.indices {
                let chart = try #require(try await archive.charts(.album, of: try Username("single\(n)"), weeks: [week])?.first)
                #expect(chart.entries.first?.plays == 2, "order \(orders[n])")
            }
        }
    }

    /// Dense listening (chains of copies a few seconds to two minutes apart,
    /// case variants, other albums at one instant, exact repeats), stored
    /// in random orders split into random batches through imports, received
    /// listens and sync pages: every way gives the rows of one sorted
    /// import, and every week's charts equal a tally of those rows.
    @Test(arguments: Backend.allCases)
    func randomOrdersAndSplitsGiveTheSameArchive(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            var rng = SplitMix64(seed: 27)
            let artists = ["Low", "LOW", "Can"]
            let albums = ["Things We Lost", "things we lost", "Tago Mago", ""]
            var listens: [Scrobble] = []
            var instant = Self.t
            for _ in 0..<400 {
                instant += Int64(rng.next() % 130)
                let a = Int(rng.next() % 3)
                listens.append(Scrobble(instant: instant, artist: artists[a], album: albums[Int(rng.next() % 4)], track: "Track \(rng.next() % 3)",
                                        albumMBID: rng.next() % 5 == 0 ? "album-\(rng.next() % 2)" : nil))
                if rng.next() % 10 == 0 { listens.append(listens.last!) }
            }
            let reference = try Username("reference")
            _ = try await archive.store(listens.sorted { $0.instant < $1.instant }, of: reference, origin: .lastFMExport)
            let expected = try await Self.rows(archive, reference)
            #expect(expected.count < Set(listens).count, "the listens hold copies of one play")
            for round in 0..<6 {
                let user = try Username("order\(round)")
                var rest = listens.shuffled(using: &rng)
                while !rest.isEmpty {
                    let size = min(rest.count, Int(rng.next() % 40) + 1)
                    let batch = Array(rest.prefix(size))
                    rest.removeFirst(size)
                    switch rng.next() % 3 {
                    case 0: _ = try await archive.store(batch, of: user, origin: .received)
                    case 1: _ = try await archive.storeSyncPage(batch, of: user, next: nil)
                    default: _ = try await archive.store(batch.map { ($0, ScrobbleOrigin.listenBrainz) }, of: user)
                    }
                }
                let rows = try await Self.rows(archive, user)
                #expect(rows == expected, "round \(round): \(rows.count) rows, \(expected.count) expected")
                let weeks = Set(expected.map { LastFMWeekCalendar.week(containing: $0.instant) }).sorted { $0.from < $1.from }
                for kind in [ChartKind.album, .track] {
                    let charts = try #require(try await archive.charts(kind, of: user, weeks: weeks))
                    for (week, chart) in zip(weeks, charts) {
                        let tally = ScrobbleTally.chart(kind, user: user, week: week,
                                                        scrobbles: expected.filter { $0.instant >= week.from && $0.instant < week.to })
                        #expect(chart == tally, "round \(round), \(kind) chart of \(week)")
                    }
                }
            }
        }
    }

    /// A chain of copies longer than what a batch reads around itself (an
    /// hour): the planner asks for a wider read until it has the chain.
    @Test(arguments: Backend.allCases)
    func aLongChainIsReadWhole(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            let user = try Username("looper")
            // Every 40 s for three hours: one chain; the earliest counts,
            // then every other one (80 s after the last that counts).
            let chain = (1...270).map { Scrobble(instant: Self.t + Int64($0) * 40, artist: "Low", album: "", track: "Loop") }
            for batch in stride(from: 0, to: chain.count, by: 30).map({ Array(chain[$0..<min($0 + 30, chain.count)]) }) {
                _ = try await archive.store(batch, of: user, origin: .received)
            }
            #expect(try await Self.rows(archive, user).count == 135)
            // One earlier copy shifts every decision along the three hours:
            // it counts, and so do the copies at 80, 160, … s after it.
            let first = Scrobble(instant: Self.t + 10, artist: "Low", album: "", track: "Loop")
            #expect(try await archive.store([first], of: user, origin: .received) == InsertCounts(inserted: 1, duplicates: 0))
            let rows = try await Self.rows(archive, user)
            #expect(rows.first == first)
            #expect(rows.count == 136)
            #expect(rows.dropFirst().allSatisfy { ($0.instant - Self.t) % 80 == 0 })
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $1.instant - $0.instant >= 60 })
        }
    }
}
