import Foundation
import Testing
import TestSupport
import VinylogueCore
import Stores

/// `RollupPlanning` decides, for both stores, how a write's touched weeks
/// get their kept chart rows. Answered from a model of a store, the plan it
/// gives, applied to the kept rows (an adjusted week only at the ranks it
/// names), always leaves each week's rows equal to a whole count of the
/// week's stored scrobbles.
@Suite struct RollupPlanningTests {
    /// A store in memory: scrobbles keyed as both stores key them, and kept rows.
    struct ModelStore {
        var stored: [String: Scrobble] = [:]
        var kept: [Int64: [ChartKind: [ChartEntry]]] = [:]

        static func key(_ s: Scrobble) -> String { "\(s.instant)\u{1F}\(s.artist)\u{1F}\(s.track)" }

        func scrobbles(from: Int64, to: Int64) -> [Scrobble] { stored.values.filter { $0.instant >= from && $0.instant < to } }

        /// Stores `batch` as a write does, saying which rows it inserted.
        mutating func write(_ batch: [Scrobble]) -> TouchedWeeks {
            var touched = TouchedWeeks()
            for s in batch {
                if stored[Self.key(s)] == nil {
                    stored[Self.key(s)] = s
                    touched.add(inserted: s)
                } else {
                    // An ignored exact duplicate hides which rows went in.
                    touched.add(perhapsInserted: s)
                }
            }
            return touched
        }

        func answer(_ planning: inout RollupPlanning) {
            while let question = planning.question {
                switch question {
                case .counts(let ranges): planning.answer(counts: ranges.map { scrobbles(from: $0.lowerBound, to: $0.upperBound).count })
                case .keptRows(let weeks): planning.answer(kept: kept.filter { weeks.contains($0.key) })
                case .scrobbles(let weeks):
                    planning.answer(scrobbles: Dictionary(uniqueKeysWithValues: weeks.map { ($0, scrobbles(from: $0, to: WeeklyRollup.end(of: $0))) }))
                }
            }
        }

        /// Writes `plan` as SQLite does: a replaced week whole, an adjusted
        /// one only at the ranks it names.
        mutating func apply(_ plan: RollupPlan) {
            for change in plan.changes {
                switch change {
                case .replace(let week, let rows):
                    kept[week] = Dictionary(grouping: rows, by: \.kind).mapValues { $0.map(\.entry) }
                case .adjust(let week, let rows, let changed):
                    for kind in WeeklyRollup.kinds {
                        let new = rows.filter { $0.kind == kind }.map(\.entry)
                        var entries = kept[week]?[kind] ?? []
                        for i in changed[kind] ?? [] {
                            if i < entries.count { entries[i] = new[i] } else { entries.append(new[i]) }
                        }
                        kept[week, default: [:]][kind] = entries
                    }
                }
            }
        }

        func wholeCount(_ week: Int64) -> [ChartKind: [ChartEntry]] {
            let rows = WeeklyRollup.rows(week: week, scrobbles: scrobbles(from: week, to: WeeklyRollup.end(of: week)))
            return Dictionary(grouping: rows, by: \.kind).mapValues { $0.map(\.entry) }
        }
    }

    static let artists = ["Portishead", "PORTISHEAD", "Björk", "björk", "Mogwai"]
    static let albums = ["Dummy", "dummy", "Homogenic", "", "Young Team"]
    static let firstWeek = LastFMWeekCalendar.week(containing: 1_600_000_000).from

    static func scrobble(_ rng: inout SplitMix64, in span: Range<Int64>) -> Scrobble {
        let a = Int(rng.next() % 5), b = Int(rng.next() % 5)
        return Scrobble(instant: span.lowerBound + Int64(rng.next() % UInt64(span.count)), artist: artists[a], album: albums[b],
                        track: "Track \(rng.next() % 4)", artistMBID: rng.next() % 3 == 0 ? "artist-\(a)" : nil,
                        albumMBID: rng.next() % 4 == 0 ? "album-\(b)-\(rng.next() % 2)" : nil, trackMBID: nil)
    }

    @Test func planningAWriteThatTouchedNothingAsksNothing() {
        let planning = RollupPlanning(touched: TouchedWeeks())
        #expect(planning.question == nil)
        #expect(planning.plan.changes.isEmpty)
    }

    /// Both ways of asking (counts one question at a time, as SQLite asks,
    /// or together, as PostgreSQL does) give the same plans.
    @Test(arguments: 0..<100, [false, true])
    func everyPlanLeavesTheKeptRowsEqualToAWholeCount(seed: Int, countsTogether: Bool) {
        var rng = SplitMix64(seed: UInt64(seed) &* 7919 &+ 1)
        var store = ModelStore()
        var kinds: [String: Int] = [:]
        let week = LastFMWeekCalendar.weekLength
        for _ in 0..<24 {
            // A batch: a player's few listens late in the latest week, an
            // import's many anywhere in three weeks, a resend of stored ones,
            // or a listen that arrives late, among the week's others.
            let batch: [Scrobble]
            switch rng.next() % 4 {
            case 0:
                let latest = (store.stored.values.map(\.instant).max() ?? Self.firstWeek) + 1
                batch = (0..<Int(1 + rng.next() % 3)).map { _ in Self.scrobble(&rng, in: latest..<(latest + 3_600)) }
            case 1:
                batch = (0..<Int(1 + rng.next() % 40)).map { _ in Self.scrobble(&rng, in: Self.firstWeek..<(Self.firstWeek + 3 * week)) }
            case 2:
                batch = Array(store.stored.values.shuffled(using: &rng).prefix(3)) + [Self.scrobble(&rng, in: Self.firstWeek..<(Self.firstWeek + week))]
            default:
                batch = [Self.scrobble(&rng, in: Self.firstWeek..<(Self.firstWeek + week))]
            }
            let touched = store.write(batch)
            var planning = RollupPlanning(touched: touched, countsTogether: countsTogether)
            store.answer(&planning)
            var apart = RollupPlanning(touched: touched, countsTogether: !countsTogether)
            store.answer(&apart)
            #expect(planning.plan == apart.plan)
            let plan = planning.plan
            #expect(plan.weeks == touched.weeks)
            for change in plan.changes {
                switch change {
                case .replace: kinds["replace", default: 0] += 1
                case .adjust: kinds["adjust", default: 0] += 1
                }
            }
            store.apply(plan)
            for w in Set(store.stored.values.map { LastFMWeekCalendar.week(containing: $0.instant).from }) {
                let whole = store.wholeCount(w)
                for kind in WeeklyRollup.kinds {
                    #expect(store.kept[w]?[kind] ?? [] == whole[kind] ?? [], "the \(kind) rows of week \(w) after \(batch.count) listens")
                }
            }
        }
        // Both ways of settling a week are exercised by most seeds.
        if seed == 0 { #expect(kinds["replace", default: 0] > 0 && kinds["adjust", default: 0] > 0) }
    }
}
