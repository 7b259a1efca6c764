import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The duplicate rule's planner alone: its quick paths decide as the
/// general one does.
@Suite struct SameListenPlanTests {
    static func denseListens(seed: UInt64, count: Int) -> [(Scrobble, ScrobbleOrigin)] {
        var rng = SplitMix64(seed: seed)
        let artists = ["Low", "LOW", "low", "Can"]
        var instant: Int64 = 1_600_000_000
        var listens: [(Scrobble, ScrobbleOrigin)] = []
        for _ in 0..<count {
            instant += Int64(rng.next() % 90)
            let listen = Scrobble(instant: instant, artist: artists[Int(rng.next() % 4)], album: rng.next() % 2 == 0 ? "A" : "B",
                                  track: "T\(rng.next() % 3)")
            listens.append((listen, .received))
            if rng.next() % 8 == 0 { listens.append((listen, .lastFMExport)) }
        }
        return listens.shuffled(using: &rng)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aBatchAloneIsDecidedAsTheGeneralPlanDecidesIt(_ seed: UInt64) throws {
        let batch = Self.denseListens(seed: seed, count: 500)
        let quick = SameListenRule.alone(batch)
        let read = SameListenRule.readRanges(of: batch.map(\.0))
        guard case .plan(let general) = SameListenRule.decided(batch, held: [], read: read) else {
            Issue.record("nothing held asks for no wider read"); return
        }
        let (quickCount, generalCount) = (quick.count.map(\.0), general.count.map(\.0))
        #expect(Set(quickCount).symmetricDifference(generalCount).isEmpty, "\(Set(quickCount).symmetricDifference(generalCount))")
        #expect(quickCount == generalCount, "the same listens count, in the same order")
        #expect(Set(quick.setAside.map(\.0)) == Set(general.setAside.map(\.0)))
        #expect(quick.counts == general.counts)
        #expect(quick.counts.inserted + quick.counts.duplicates == batch.count)
    }

    @Test func aBatchHeldWholeChangesNothing() {
        let batch = Self.denseListens(seed: 9, count: 200)
        let read = SameListenRule.readRanges(of: batch.map(\.0))
        guard case .plan(let first) = SameListenRule.plan(batch, held: [], read: read) else { Issue.record("no plan"); return }
        let held = first.count.map { HeldListen($0.0, origin: $0.1, counts: true) } + first.setAside.map { HeldListen($0.0, origin: $0.1, counts: false) }
        guard case .plan(let again) = SameListenRule.plan(batch.shuffled(), held: held, read: read) else { Issue.record("no plan"); return }
        #expect(again.isEmpty)
        #expect(again.counts == InsertCounts(inserted: 0, duplicates: batch.count))
    }

    /// A chain of one track's listens each under a minute apart, going on
    /// for two weeks (a scrobbler stuck repeating), with one more listen
    /// sent in its middle: the planner widens its read by the chain's own
    /// extent, so the store reads it in a few rounds. It widened by an hour
    /// a round: 336 growing reads, 11 s a listen, the writer blocked.
    @Test func aChainOfListensLastingDaysIsReadInAFewRounds() throws {
        let start: Int64 = 1_600_000_000
        let chain = (0..<Int64(14 * 24 * 60)).map { n in
            HeldListen(Scrobble(instant: start + n * 59, artist: "Low", album: "C'mon", track: "Try to Sleep"), origin: .received, counts: n % 2 == 0)
        }
        let middle = start + Int64(chain.count / 2) * 59 + 30
        var planning = SameListenPlanning([(Scrobble(instant: middle, artist: "LOW", album: "C'mon", track: "try to sleep"), .lastFMExport)])
        var read = 0
        while let ranges = planning.rangesToRead {
            let held = chain.filter { listen in ranges.contains { $0.contains(listen.scrobble.instant) } }
            read += held.count
            planning.answer(held: held)
        }
        #expect(planning.rounds <= 12, "\(planning.rounds) rounds")
        #expect(read <= 4 * chain.count, "\(read) listens read for a chain of \(chain.count)")
        let plan = try #require(planning.plan)
        // 59 s after a counting listen: the same play, set aside.
        #expect(plan.counts == InsertCounts(inserted: 0, duplicates: 1))
    }

    /// Names compare as their lowercased forms do, ASCII or not, without
    /// lowercasing ASCII ones.
    @Test func namesCompareAsTheirLowercasedFormsDo() {
        let names = ["Low", "LOW", "low", "L0w", "Lo@", "lo`", "Björk", "BJÖRK", "björk", "Sigur Rós", "SIGUR RÓS", "", " ", "[a]", "{A}"]
        for a in names {
            for b in names {
                #expect(TrackKey.sameName(a, b) == (a.lowercased() == b.lowercased()), "\(a) / \(b)")
            }
        }
        let concerns = SameListenRule.concerns([Scrobble(instant: 0, artist: "Low", album: "", track: "Sunflower")])
        #expect(concerns("LOW", "sunflower") && !concerns("Low", "Laser Beam"))
        let many = SameListenRule.concerns((0..<40).map { Scrobble(instant: Int64($0), artist: "Can", album: "", track: "T\($0)") })
        #expect(many("CAN", "t39") && !many("Can", "T40"))
    }
}
