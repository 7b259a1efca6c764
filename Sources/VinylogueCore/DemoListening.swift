/// How a generated listener listens: what they like, how much they play,
/// and the shape of their history. The default is the demo user's own.
public struct DemoListening: Sendable, Hashable {
    /// What their albums are like.
    public var taste: DemoTaste
    /// Multiplies the listens of albums in rotation (1: the demo user's pace).
    public var rotation: Double
    /// How many single plays a week: at least the lower bound, fewer than the upper.
    public var singles: Range<Int>
    /// Weeks starting in this range of instants have no listening at all.
    public var gap: Range<Int64>?
    /// One album played whole, week after week, for years.
    public var heavyRepeat: HeavyRepeat?

    public init(taste: DemoTaste = .indie, rotation: Double = 1, singles: Range<Int> = 4..<16, gap: Range<Int64>? = nil,
                heavyRepeat: HeavyRepeat? = nil) {
        self.taste = taste
        self.rotation = rotation
        self.singles = singles
        self.gap = gap
        self.heavyRepeat = heavyRepeat
    }
}

/// An album a listener cannot stop playing: whole, most weeks from `from`
/// to `until`, busiest in the first years and tailing off; after `until`
/// they never play it again, so rediscover has it to offer.
public struct HeavyRepeat: Sendable, Hashable {
    /// The first instant of the repeat (its album is the first one found in that week or after).
    public let from: Int64
    /// Weeks starting at or after this instant do not play it.
    public let until: Int64
    /// Whole listens in its busiest weeks.
    public let peakListens: Int

    public init(from: Int64, until: Int64, peakListens: Int) {
        self.from = from
        self.until = until
        self.peakListens = peakListens
    }

    /// How many times the album is played whole in `week` (inside the
    /// repeat): about `peakListens` a year in, fewer at the start and
    /// towards the end, and none in one week of ten (away, or busy).
    func listens(in week: ChartWeek, seed: UInt64) -> Int {
        var dice = SplitMix64(seed: seed &* 0xD1B5_4A32_D192_ED03 &+ UInt64(bitPattern: week.from))
        if dice.unit() < 0.1 { return 0 }
        let through = Double(week.from - from) / Double(max(1, until - from))
        // Rises over the first seventh, then tails off to 40 % of the peak.
        let shape = through < 1.0 / 7 ? 0.5 + 3.5 * through : 1 - 0.6 * (through - 1.0 / 7) * 7 / 6
        return max(1, Int(Double(peakListens) * shape + dice.unit()))
    }
}
