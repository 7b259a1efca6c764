/// The people of the built-in demo: `demo`, whose list the others are on,
/// and four generated friends, each with a taste and a history of their
/// own, so that every page about friends has someone to show offline.
///
/// - `theo` started listening in January 2019: year links stop there.
/// - `mara` listened from 2008, stopped in May 2013 and came back in March
///   2020: a long gap in every-year and in the everyone page.
/// - `felix` played one album whole nearly every week from September 2014
///   to the end of 2021 and never since: its album page has a long life,
///   and rediscover offers it.
/// - `june` has listened, lightly, since January 2006: the longest history.
///
/// Everything is generated from fixed seeds: the same people, albums and
/// weeks on every machine and every run. `serve --demo` archives `demo`
/// alone; `DemoChartSource` computes everyone's pages from here.
public struct DemoHousehold: Sendable {
    /// One person of the demo.
    public struct Member: Sendable {
        public let username: Username
        /// The name on their profile.
        public let realName: String
        public let history: DemoHistory
    }

    /// `demo` first, then the friends in the order they are listed.
    public let members: [Member]

    /// The demo's usernames, in the order they are listed, without
    /// generating anyone's history.
    public static let usernames: [Username] = ["demo", "theo", "mara", "felix", "june"].map { try! Username($0) }

    /// Whether `user` is one of the demo's people (by name alone: whether
    /// the demo is on is the caller's to know).
    public static func isMember(_ user: Username) -> Bool { usernames.contains(user) }

    /// The demo's five people (generating their catalogues: a few
    /// milliseconds each, so build one and keep it).
    public init() {
        let names = Self.usernames
        members = [
            Member(username: names[0], realName: "Demo Listener", history: DemoHistory()),
            Member(username: names[1], realName: "Theo Marlowe", history: DemoHistory(
                seed: 2019, start: 1_546_776_000,  // Sunday 6 January 2019
                listening: DemoListening(taste: .electronic, rotation: 1.3, singles: 6..<20))),
            Member(username: names[2], realName: "Mara Lindqvist", history: DemoHistory(
                seed: 2008, start: 1_202_644_800,  // Sunday 10 February 2008
                listening: DemoListening(taste: .folk, rotation: 0.9, singles: 3..<12,
                                         gap: 1_367_755_200..<1_583_064_000))),  // 5 May 2013 to 1 March 2020
            Member(username: names[3], realName: "Felix Okafor", history: DemoHistory(
                seed: 2014, start: 1_362_312_000,  // Sunday 3 March 2013
                listening: DemoListening(taste: .jazz, rotation: 0.6, singles: 3..<10,
                                         heavyRepeat: HeavyRepeat(from: 1_410_091_200, until: 1_641_124_800,  // 7 September 2014 to 2 January 2022
                                                                  peakListens: 4)))),
            Member(username: names[4], realName: "June Hollis", history: DemoHistory(
                seed: 2006, start: 1_136_721_600,  // Sunday 8 January 2006
                listening: DemoListening(taste: .soul, rotation: 0.6, singles: 2..<8))),
        ]
    }

    /// A household of the demo user alone, with `history` (for tests).
    public init(demo history: DemoHistory) {
        members = [Member(username: DemoHistory.username, realName: "Demo Listener", history: history)]
    }

    /// The demo user.
    public var demo: Member { members[0] }

    /// The member called `user` (in any casing), if any.
    public func member(_ user: Username) -> Member? { members.first { $0.username == user } }
}
