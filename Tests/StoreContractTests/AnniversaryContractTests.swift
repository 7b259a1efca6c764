import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import PostgresStore
@testable import SQLiteStore

/// Anniversaries and rituals on both stores, from a history with planted
/// ones among other listening: an album first played ten years ago this
/// week (and again since), one first played a year ago, one last played
/// five years ago, one first played seven years ago (no anniversary), one
/// that comes back around this week in four years (a ritual, once a week
/// early), one in only two, and an edition spelling that counts as its album.
@Suite struct AnniversaryContractTests {
    typealias Backend = StoreContractTests.Backend
    static let ana = try! Username("ana")
    /// Wednesday 25 November 2026, noon UTC.
    static let now = Date(timeIntervalSince1970: 1_795_608_000)

    static func week(_ yearsAgo: Int, shifted: Int = 0) -> ChartWeek {
        let target = ChartWeekFinder(timeZone: .gmt).target(yearsAgo: yearsAgo, from: now)
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        let length = LastFMWeekCalendar.weekLength * Int64(shifted)
        return ChartWeek(from: week.from + length, to: week.to + length)
    }

    static func history() -> [Scrobble] {
        var scrobbles: [Scrobble] = []
        func play(_ artist: String, _ album: String, in week: ChartWeek, _ count: Int) {
            for n in 0..<count {
                scrobbles.append(Scrobble(instant: week.from + 3_600 + Int64(n) * 400 + Int64(scrobbles.count % 50), artist: artist, album: album,
                                          track: "Track \(n)"))
            }
        }
        // Other listening, every fourth week of twelve years, away from this week's.
        for n in 0..<150 {
            let far = week(12, shifted: 10 + n * 4)
            guard far.to < week(0).from - 2 * LastFMWeekCalendar.weekLength || far.from > week(0).to else { continue }
            play("Filler \(n % 7)", "Background \(n % 7)", in: far, 3 + n % 5)
        }
        play("Vetiver", "Tidewater", in: week(10), 6)
        play("Vetiver", "Tidewater (Deluxe Edition)", in: week(3), 4)
        play("Low", "HEY WHAT", in: week(1), 5)
        play("Lower Dens", "Nootropics", in: week(8), 3)
        play("Lower Dens", "Nootropics", in: week(6, shifted: 3), 3)
        play("Lower Dens", "Nootropics", in: week(5), 4)
        play("Bonnie Prince Billy", "I See a Darkness", in: week(7), 7)
        play("Grouper", "Ruins", in: week(12, shifted: -1), 5)
        play("Grouper", "Ruins", in: week(9), 4)
        play("Grouper", "Ruins", in: week(4, shifted: 1), 3)
        play("Grouper", "Ruins", in: week(0), 2)
        play("Julianna Barwick", "Nepenthe", in: week(6), 3)
        play("Julianna Barwick", "Nepenthe", in: week(2), 3)
        return scrobbles.filter { $0.instant < Int64(now.timeIntervalSince1970) }
    }

    @Test(arguments: Backend.allCases)
    func plantedAnniversariesAndRitualsAreFound(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles
            try await archive.store(Self.history(), of: Self.ana, origin: .lastFMExport)
            let found = try #require(try await archive.anniversaries(of: Self.ana, now: Self.now, timeZone: .gmt))
            #expect(found.milestones.map { "\($0.kind.rawValue) \($0.yearsAgo) \($0.artist) – \($0.name) \($0.plays)" } == [
                "firstPlayed 1 Low – HEY WHAT 5",
                "lastPlayed 5 Lower Dens – Nootropics 4",
                "firstPlayed 10 Vetiver – Tidewater 6",
            ])
            #expect(found.milestones.allSatisfy { $0.week == Self.week($0.yearsAgo) })
            #expect(found.rituals.map { "\($0.artist) – \($0.name) \($0.years)" } == ["Grouper – Ruins [2014, 2017, 2022, 2026]"])
            #expect(found.rituals.first?.weeks == [Self.week(12, shifted: -1), Self.week(9), Self.week(4, shifted: 1), Self.week(0)])
            #expect(found.season == "late November")
            #expect(found.sentence(found.rituals[0]) == "Your late-November album: Ruins by Grouper, played in 2014, 2017, 2022 and 2026")
            #expect(Anniversaries.sentence(found.milestones[2]) == "First played ten years ago this week: Tidewater by Vetiver")
            #expect(Anniversaries.sentence(found.milestones[0]) == "First played a year ago this week: HEY WHAT by Low")
            // Someone the archive does not hold.
            #expect(try await archive.anniversaries(of: try Username("nobody"), now: Self.now, timeZone: .gmt) == nil)
        }
    }
}
