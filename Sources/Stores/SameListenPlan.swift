import Foundation
import VinylogueCore

/// One listen the archive already holds near a batch being stored: one that
/// counts (a row of the charts) or one set aside as the same play as a
/// listen that counts.
public struct HeldListen: Sendable, Hashable {
    public let scrobble: Scrobble
    public let origin: ScrobbleOrigin
    public let counts: Bool

    public init(_ scrobble: Scrobble, origin: ScrobbleOrigin, counts: Bool) {
        self.scrobble = scrobble
        self.origin = origin
        self.counts = counts
    }
}

/// What storing a batch changes, by the archive's duplicate rule
/// (`SameListenRule`), worked out from the batch and the listens held
/// around it: a store executes it in one transaction.
///
/// The rule decides over every listen ever received, whatever their order,
/// so a listen that arrives late can make one that counted a set-aside
/// copy of itself, and bring back one that had been set aside.
public struct SameListenPlan: Sendable {
    /// Listens that count from now on: new ones, or set-aside ones brought back.
    public var count: [(Scrobble, ScrobbleOrigin)] = []
    /// Listens that counted and no longer do (each is set aside too).
    public var uncount: [Scrobble] = []
    /// Listens set aside from now on: new ones, or ones that counted.
    public var setAside: [(Scrobble, ScrobbleOrigin)] = []
    /// Set-aside listens that count from now on (each is in `count` too).
    public var unsetAside: [Scrobble] = []
    /// How many more listens count after the batch than before it.
    public var added = 0
    /// The batch's listens that did not add a counted listen: the same
    /// play as one held or as another in the batch.
    public var duplicates = 0

    public var isEmpty: Bool { count.isEmpty && uncount.isEmpty && setAside.isEmpty && unsetAside.isEmpty }

    /// What the store reports of the batch.
    public var counts: InsertCounts { InsertCounts(inserted: added, duplicates: duplicates) }
}

extension SameListenRule {
    /// The outcome of planning a batch against what was read: the plan, or
    /// the ranges to read instead (a chain of copies of one play, each
    /// less than `window` seconds from the next, reached past the edge of
    /// what was read).
    public enum Planned: Sendable {
        case plan(SameListenPlan)
        case readWider([ClosedRange<Int64>])
    }

    /// The ranges of instants (inclusive) to read held listens from before
    /// planning `batch`: its neighbourhoods (`neighbourhoods(of:)`), each
    /// covering every instant that could be the same play as one of it.
    public static func readRanges(of batch: [Scrobble]) -> [ClosedRange<Int64>] {
        neighbourhoods(of: ascending(batch)).map { $0.above.plus(1)...$0.below.minus(1) }
    }

    /// `ranges` with overlapping or touching ones joined, in order.
    static func merged(_ ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound.plus(1) {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// Plans storing `batch` (each listen with its origin, in any order)
    /// given `held`: every listen, counting or set aside, the archive holds
    /// with an instant in one of the ranges `read` (start with
    /// `readRanges(of:)`).
    ///
    /// Listens of one track (artist and track compared as charts compare
    /// them) are taken in time order, ties broken by their other fields; a
    /// listen counts when it is the first, or at least `window` seconds
    /// after the last one that counts. Only chains that hold a listen of
    /// the batch are decided again; a chain is listens of one track each
    /// less than `window` seconds after the one before, and one that
    /// reaches within a minute of the edge of what was read asks for a
    /// wider read.
    public static func plan(_ batch: [(Scrobble, ScrobbleOrigin)], held: [HeldListen], read: [ClosedRange<Int64>]) -> Planned {
        // The two common cases, without grouping by track: nothing held
        // near the batch (a fresh import), and a batch held already whole
        // (the same export imported again).
        if held.isEmpty { return .plan(alone(batch)) }
        if let again = heldAlready(batch, held) { return .plan(again) }
        return decided(batch, held: held, read: read)
    }

    /// The plan for a batch with nothing held near it: the same decision
    /// as `decided`, made in one pass over the batch in time order, each
    /// listen checked against the counting ones of the last minute.
    static func alone(_ batch: [(Scrobble, ScrobbleOrigin)]) -> SameListenPlan {
        let sorted = batch.sorted { a, b in
            a.0.instant != b.0.instant ? a.0.instant < b.0.instant : precedes(a.0, b.0)
        }
        var plan = SameListenPlan()
        var recent = 0  // the first counting listen less than a minute back
        var previous: Scrobble?
        for (scrobble, origin) in sorted {
            if let previous, previous == scrobble { continue }
            previous = scrobble
            while recent < plan.count.count, plan.count[recent].0.instant <= scrobble.instant.minus(window) { recent += 1 }
            if plan.count[recent...].contains(where: { TrackKey.same($0.0, scrobble) }) {
                plan.setAside.append((scrobble, origin))
            } else {
                plan.count.append((scrobble, origin))
            }
        }
        plan.added = plan.count.count
        plan.duplicates = batch.count - plan.added
        return plan
    }

    /// Whether a held listen of `artist` and `track` can matter to `batch`:
    /// only listens of the batch's tracks are decided again, so the store
    /// need not read the rest whole (a player's listen a few seconds after
    /// others of other tracks reads nothing but their names).
    public static func concerns(_ batch: [Scrobble]) -> @Sendable (String, String) -> Bool {
        if batch.count <= 16 {
            let names = batch.map { ($0.artist, $0.track) }
            return { artist, track in names.contains { TrackKey.sameName($0.0, artist) && TrackKey.sameName($0.1, track) } }
        }
        let keys = Set(batch.map(TrackKey.init))
        return { artist, track in keys.contains(TrackKey(artist: artist, track: track)) }
    }

    /// The empty plan when every listen of `batch` is held already, field
    /// for field; nil otherwise.
    static func heldAlready(_ batch: [(Scrobble, ScrobbleOrigin)], _ held: [HeldListen]) -> SameListenPlan? {
        var byInstant: [Int64: [Scrobble]] = [:]
        for listen in held { byInstant[listen.scrobble.instant, default: []].append(listen.scrobble) }
        guard batch.allSatisfy({ listen in byInstant[listen.0.instant]?.contains(listen.0) == true }) else { return nil }
        var plan = SameListenPlan()
        plan.duplicates = batch.count
        return plan
    }

    /// The plan in general: listens grouped by track, each chain that
    /// holds a listen of the batch decided again.
    static func decided(_ batch: [(Scrobble, ScrobbleOrigin)], held: [HeldListen], read: [ClosedRange<Int64>]) -> Planned {
        struct Entry {
            let scrobble: Scrobble
            let origin: ScrobbleOrigin
            /// nil: new in this batch; else whether it counts now.
            let held: Bool?
        }
        var tracks: [TrackKey: [Entry]] = [:]
        for listen in held {
            tracks[TrackKey(listen.scrobble), default: []].append(Entry(scrobble: listen.scrobble, origin: listen.origin, held: listen.counts))
        }
        for (scrobble, origin) in batch {
            tracks[TrackKey(scrobble), default: []].append(Entry(scrobble: scrobble, origin: origin, held: nil))
        }
        var plan = SameListenPlan()
        var wider: [ClosedRange<Int64>] = []
        for var entries in tracks.values where entries.contains(where: { $0.held == nil }) {
            // Held before new at the same fields, so a listen sent again is
            // the one already held.
            entries.sort { a, b in
                if a.scrobble.instant != b.scrobble.instant { return a.scrobble.instant < b.scrobble.instant }
                if a.scrobble != b.scrobble { return precedes(a.scrobble, b.scrobble) }
                return a.held != nil && b.held == nil
            }
            var index = 0
            while index < entries.count {
                // One chain: each listen less than `window` after the one before.
                var end = index + 1
                while end < entries.count, entries[end].scrobble.instant.minus(entries[end - 1].scrobble.instant) < window { end += 1 }
                let chain = entries[index..<end]
                index = end
                guard chain.contains(where: { $0.held == nil }) else { continue }
                // Whatever could be the same play as its ends must have been read.
                let needed = chain.first!.scrobble.instant.minus(window - 1)...chain.last!.scrobble.instant.plus(window - 1)
                guard read.contains(where: { $0.lowerBound <= needed.lowerBound && $0.upperBound >= needed.upperBound }) else {
                    // Wider by the chain's own extent (an hour at least): a
                    // chain that goes on for days is read in a few rounds,
                    // each at most twice the last, not an hour at a time.
                    let margin = max(3600, needed.upperBound.minus(needed.lowerBound))
                    wider.append(needed.lowerBound.minus(margin)...needed.upperBound.plus(margin))
                    continue
                }
                var lastCounted: Int64?
                var previous: Scrobble?
                for entry in chain {
                    // The same listen again (every field equal) changes nothing.
                    if let previous, previous == entry.scrobble { continue }
                    previous = entry.scrobble
                    let counts = lastCounted.map { entry.scrobble.instant.minus($0) >= window } ?? true
                    if counts { lastCounted = entry.scrobble.instant }
                    switch (entry.held, counts) {
                    case (nil, true):
                        plan.count.append((entry.scrobble, entry.origin))
                        plan.added += 1
                    case (nil, false):
                        plan.setAside.append((entry.scrobble, entry.origin))
                    case (true?, false):
                        plan.uncount.append(entry.scrobble)
                        plan.setAside.append((entry.scrobble, entry.origin))
                        plan.added -= 1
                    case (false?, true):
                        plan.unsetAside.append(entry.scrobble)
                        plan.count.append((entry.scrobble, entry.origin))
                        plan.added += 1
                    case (true?, true), (false?, false):
                        break
                    }
                }
            }
        }
        if !wider.isEmpty { return .readWider(merged(read + wider)) }
        // Counted new listens, in time order (the stores insert them in
        // order and count weeks in place when they come after the rest).
        plan.count.sort { a, b in a.0.instant != b.0.instant ? a.0.instant < b.0.instant : precedes(a.0, b.0) }
        // `added` is never negative (the earliest of each minute, taken in
        // turn, is the largest set of listens a minute apart), so every
        // listen of the batch is either added or a duplicate.
        plan.duplicates = batch.count - plan.added
        return .plan(plan)
    }

    /// The order that breaks ties between listens of one track at one
    /// instant: by spelling, album and ids, so every store and every order
    /// of arrival keeps the same one.
    static func precedes(_ a: Scrobble, _ b: Scrobble) -> Bool {
        if a.artist != b.artist { return a.artist < b.artist }
        if a.track != b.track { return a.track < b.track }
        if a.album != b.album { return a.album < b.album }
        if a.artistMBID != b.artistMBID { return (a.artistMBID ?? "") < (b.artistMBID ?? "") }
        if a.albumMBID != b.albumMBID { return (a.albumMBID ?? "") < (b.albumMBID ?? "") }
        return (a.trackMBID ?? "") < (b.trackMBID ?? "")
    }
}

/// A track as the duplicate rule (and the charts) tell tracks apart: artist
/// and track name without regard to case.
struct TrackKey: Hashable {
    let artist: String
    let track: String

    init(_ scrobble: Scrobble) {
        self.init(artist: scrobble.artist, track: scrobble.track)
    }

    init(artist: String, track: String) {
        self.artist = Self.folded(artist)
        self.track = Self.folded(track)
    }

    /// Whether `a` and `b` are listens of one track.
    static func same(_ a: Scrobble, _ b: Scrobble) -> Bool {
        sameName(a.artist, b.artist) && sameName(a.track, b.track)
    }

    /// Whether two names are one without regard to case, as `folded`
    /// compares them; ASCII names are compared byte by byte, without
    /// lowercasing either.
    static func sameName(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let x = a.utf8, y = b.utf8
        if x.allSatisfy({ $0 < 0x80 }) && y.allSatisfy({ $0 < 0x80 }) {
            guard x.count == y.count else { return false }
            return zip(x, y).allSatisfy { p, q in p == q || (p | 0x20 == q | 0x20 && (p | 0x20) >= 0x61 && (p | 0x20) <= 0x7A) }
        }
        return a.lowercased() == b.lowercased()
    }

    /// `name` lowercased as Swift lowercases; names without an ASCII
    /// capital or any non-ASCII byte (most) are already so.
    static func folded(_ name: String) -> String {
        name.utf8.allSatisfy { $0 < 0x80 && !($0 >= 0x41 && $0 <= 0x5A) } ? name : name.lowercased()
    }
}

/// The duplicate rule's reads and plan for one batch, as both stores run
/// it: read what is held in `rangesToRead`, answer, and repeat until
/// `plan` is given (a chain of listens that reaches the edge of what was
/// read asks for a wider read).
///
///     var planning = SameListenPlanning(batch)
///     while let ranges = planning.rangesToRead {
///         planning.answer(held: read(ranges).filter { planning.concerns($0.artist, $0.track) })
///     }
///     execute(planning.plan!)
public struct SameListenPlanning: Sendable {
    private let batch: [(Scrobble, ScrobbleOrigin)]
    private var ranges: [ClosedRange<Int64>]
    /// Whether a held listen of an artist and track can matter to the
    /// batch (`SameListenRule.concerns`): a store may leave the rest out.
    /// Made anew at each use, so a store can make it only once a row is
    /// held (a fresh import's batch holds none, and never pays for it).
    public var concerns: @Sendable (String, String) -> Bool { SameListenRule.concerns(batch.map(\.0)) }
    /// The plan, once the reads have settled it.
    public private(set) var plan: SameListenPlan?
    /// How many reads the batch has needed so far.
    public private(set) var rounds = 0

    public init(_ batch: [(Scrobble, ScrobbleOrigin)]) {
        self.batch = batch
        ranges = SameListenRule.readRanges(of: batch.map(\.0))
    }

    /// The ranges of instants (inclusive) whose held listens to read next;
    /// nil once `plan` is given.
    public var rangesToRead: [ClosedRange<Int64>]? { plan == nil ? ranges : nil }

    /// Every listen held in `rangesToRead`, counting and set aside (those
    /// `concerns` rejects may be left out).
    public mutating func answer(held: [HeldListen]) {
        precondition(plan == nil, "the plan is made")
        rounds += 1
        switch SameListenRule.plan(batch, held: held, read: ranges) {
        case .readWider(let wider): ranges = wider
        case .plan(let made): plan = made
        }
    }
}
