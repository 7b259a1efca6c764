import Foundation
import VinylogueCore

/// Which kept chart rows one write changes, decided once for both stores.
///
/// After a write has inserted scrobbles (`TouchedWeeks`), each touched
/// week's kept rows are brought up to date in the same transaction, in one
/// of three ways:
///
/// 1. the week holds only this write's rows (a first import): count them;
/// 2. the write's listens come after all the week held and counting them
///    into the kept rows is exact (`WeeklyRollup.adding`; a player's
///    listens as they come): adjust the kept rows;
/// 3. otherwise read the week's scrobbles back and count them all.
///
/// The planner asks one question at a time, and the store answers it from
/// its database, in the write's transaction, in whatever way is fastest
/// there (SQLite a cached statement per week, PostgreSQL one `unnest`
/// query for all weeks). When `question` is nil, `plan` says what to write.
///
///     var planning = RollupPlanning(touched: touched)
///     while let question = planning.question {
///         switch question {
///         case .counts(let ranges): planning.answer(counts: …)
///         case .keptRows(let weeks): planning.answer(kept: …)
///         case .scrobbles(let weeks): planning.answer(scrobbles: …)
///         }
///     }
///     write(planning.plan)
public struct RollupPlanning: Sendable {
    /// What the planner needs to know next.
    public enum Question: Sendable, Equatable {
        /// How many scrobbles the person has stored in each range
        /// `[lowerBound, upperBound)`, in the order given: first each touched
        /// week whole, then, for the weeks this write added to, from the
        /// write's first listen in the week to the week's end.
        case counts([Range<Int64>])
        /// The kept album and artist rows of each of these weeks (week
        /// starts), by kind, in rank order.
        case keptRows(weeks: [Int64])
        /// All stored scrobbles of each of these weeks (week starts), in
        /// any order.
        case scrobbles(weeks: [Int64])
    }

    private enum Stage: Sendable {
        case weekCounts, laterCounts, keptRows, scrobbles, done
    }

    private let touched: TouchedWeeks
    private var stage: Stage
    private var changes: [Int64: RollupPlan.Change] = [:]
    /// Weeks this write added to that are not settled yet, with the
    /// write's rows in each, oldest week first.
    private var candidates: [(week: Int64, added: [Scrobble])] = []
    /// Candidates whose new listens all come after the week's others.
    private var afterAll: Set<Int64> = []
    /// Weeks only a whole count can settle.
    private var readBack: [Int64] = []

    /// Whether the first question also asks, for each week this write
    /// added to, the count from its first new listen (one question fewer,
    /// for a store where each question is a round trip to a server; a
    /// store that counts in-process asks only what it needs).
    private let countsTogether: Bool
    /// How the person's plays group into albums (their choice), with the
    /// names this write has folded.
    private var names: ScrobbleTally.FoldedNames

    public init(touched: TouchedWeeks, countsTogether: Bool = false, folding: AlbumFolding = .editions) {
        self.touched = touched
        self.countsTogether = countsTogether
        names = ScrobbleTally.FoldedNames(folding)
        stage = touched.weeks.isEmpty ? .done : .weekCounts
    }

    /// The weeks this write added to, with its rows there.
    private var addedTo: [(week: Int64, added: [Scrobble])] {
        touched.weeks.compactMap { week in touched.latest(week).flatMap { $0.isEmpty ? nil : (week, $0) } }
    }

    private static func later(_ weeks: [(week: Int64, added: [Scrobble])]) -> [Range<Int64>] {
        weeks.map { $0.added.map(\.instant).min()!..<WeeklyRollup.end(of: $0.week) }
    }

    /// The next question, or nil once `plan` is final.
    public var question: Question? {
        switch stage {
        case .weekCounts: .counts(touched.weeks.map { $0..<WeeklyRollup.end(of: $0) } + (countsTogether ? Self.later(addedTo) : []))
        case .laterCounts: .counts(Self.later(candidates))
        case .keptRows: .keptRows(weeks: candidates.map(\.week))
        case .scrobbles: .scrobbles(weeks: readBack)
        case .done: nil
        }
    }

    /// Answers `.counts`: one count per range asked, in order.
    public mutating func answer(counts: [Int]) {
        switch stage {
        case .weekCounts:
            let together = countsTogether ? addedTo : []
            precondition(counts.count == touched.weeks.count + together.count, "one count per range asked")
            for (week, stored) in zip(touched.weeks, counts) {
                if let whole = touched.wholeWeek(week, storedCount: stored) {
                    changes[week] = .replace(week: week, rows: WeeklyRollup.rows(week: week, scrobbles: whole, names: &names))
                } else if let added = touched.latest(week), !added.isEmpty {
                    candidates.append((week, added))
                } else {
                    readBack.append(week)
                }
            }
            if countsTogether {
                // The later counts came with the first: settle them now.
                var later: [Int64: Int] = [:]
                for (week, count) in zip(together.map(\.week), counts.dropFirst(touched.weeks.count)) { later[week] = count }
                for candidate in candidates where later[candidate.week] == candidate.added.count { afterAll.insert(candidate.week) }
                stage = candidates.isEmpty ? (readBack.isEmpty ? .done : .scrobbles) : .keptRows
            } else {
                stage = candidates.isEmpty ? (readBack.isEmpty ? .done : .scrobbles) : .laterCounts
            }
        case .laterCounts:
            precondition(counts.count == candidates.count, "one count per week added to")
            for (candidate, later) in zip(candidates, counts) where later == candidate.added.count {
                afterAll.insert(candidate.week)
            }
            stage = .keptRows
        default:
            preconditionFailure("counts were not asked for")
        }
    }

    /// Answers `.keptRows`: each week's kept entries by kind (a week or
    /// kind with none may be left out).
    public mutating func answer(kept: [Int64: [ChartKind: [ChartEntry]]]) {
        precondition(stage == .keptRows, "kept rows were not asked for")
        weeks: for (week, added) in candidates {
            var rows: [WeeklyRollup.ChartRow] = []
            var changed: [ChartKind: [Int]] = [:]
            for kind in WeeklyRollup.kinds {
                let old = kept[week]?[kind] ?? []
                guard let new = WeeklyRollup.adding(added, to: old, kind: kind, afterAll: afterAll.contains(week), names: &names) else {
                    readBack.append(week)
                    continue weeks
                }
                for entry in new { rows.append(WeeklyRollup.ChartRow(week: week, kind: kind, entry: entry, names: &names)) }
                changed[kind] = new.indices.filter { $0 >= old.count || old[$0] != new[$0] }
            }
            changes[week] = .adjust(week: week, rows: rows, changed: changed)
        }
        readBack.sort()
        stage = readBack.isEmpty ? .done : .scrobbles
    }

    /// Answers `.scrobbles`: each week's stored scrobbles.
    public mutating func answer(scrobbles: [Int64: [Scrobble]]) {
        precondition(stage == .scrobbles, "scrobbles were not asked for")
        for week in readBack {
            changes[week] = .replace(week: week, rows: WeeklyRollup.rows(week: week, scrobbles: scrobbles[week] ?? [], names: &names))
        }
        stage = .done
    }

    /// What to write, once `question` is nil: one change per touched week,
    /// oldest first.
    public var plan: RollupPlan {
        precondition(stage == .done, "the planner still has a question")
        return RollupPlan(changes: touched.weeks.compactMap { changes[$0] })
    }
}

/// What one write does to the kept weekly charts: per touched week, its
/// rows replaced, or the kept rows adjusted.
public struct RollupPlan: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        /// Delete the week's rows and write `rows`.
        case replace(week: Int64, rows: [WeeklyRollup.ChartRow])
        /// The week's new rows are `rows`; only the ranks at `changed`
        /// (indices from 0, per kind) differ from the kept ones, so a store
        /// may rewrite just those (a new rank past the kept ones included).
        case adjust(week: Int64, rows: [WeeklyRollup.ChartRow], changed: [ChartKind: [Int]])

        public var week: Int64 {
            switch self {
            case .replace(let week, _), .adjust(let week, _, _): week
            }
        }

        /// The week's rows once the change is written.
        public var rows: [WeeklyRollup.ChartRow] {
            switch self {
            case .replace(_, let rows), .adjust(_, let rows, _): rows
            }
        }
    }

    public let changes: [Change]

    /// The weeks changed, oldest first.
    public var weeks: [Int64] { changes.map(\.week) }
}
