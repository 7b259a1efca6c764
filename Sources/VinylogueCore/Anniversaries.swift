import Foundation

/// One album of a kept weekly chart, with the first and last week it
/// charted in over the person's whole history (the album index's): what
/// anniversaries and rituals are found from (`ArchiveReading.albumsCharted`).
public struct ChartedAlbum: Sendable, Hashable {
    public let week: ChartWeek
    public let artist: String
    public let name: String
    public let plays: Int
    public let mbid: String?
    /// The album's grouping key (`ScrobbleTally.key`, as the person groups albums).
    public let key: String
    /// Its first and last week, when the read was asked for them (for
    /// an anniversary's week; a ritual needs only the key).
    public let firstWeek: ChartWeek?
    public let lastWeek: ChartWeek?

    public init(week: ChartWeek, artist: String, name: String, plays: Int, mbid: String?, key: String, firstWeek: ChartWeek?, lastWeek: ChartWeek?) {
        self.week = week
        self.artist = artist
        self.name = name
        self.plays = plays
        self.mbid = mbid.flatMap { $0.isEmpty ? nil : $0 }
        self.key = key
        self.firstWeek = firstWeek
        self.lastWeek = lastWeek
    }
}

/// What this week means in a person's history: the albums first played,
/// or last played, exactly 1, 5, 10, 15, 20… years ago this week, and the
/// albums that come back around this time of year — charted within a week
/// of it in at least three different years ("Your late-November album").
/// Shown on the week's page, every year, the feed and the digest.
public struct Anniversaries: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// Its first week ever.
        case firstPlayed
        /// Its last week so far.
        case lastPlayed
    }

    public struct Milestone: Sendable, Hashable {
        public let kind: Kind
        public let yearsAgo: Int
        public let week: ChartWeek
        public let artist: String
        public let name: String
        public let plays: Int
        public let mbid: String?
    }

    public struct Ritual: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let mbid: String?
        /// The calendar years it charted around this week, oldest first.
        public let years: [Int]
        /// The week of each of those years it charted in most (for links), in the same order.
        public let weeks: [ChartWeek]
    }

    /// Years ago that make an anniversary.
    public static func isAnniversary(_ yearsAgo: Int) -> Bool { yearsAgo == 1 || yearsAgo > 0 && yearsAgo % 5 == 0 }
    /// Years in which an album must chart around this week to be a ritual.
    public static let ritualYears = 3
    /// Weeks either side of this week that count as "around" it.
    public static let ritualMargin = 1
    /// At most this many rituals.
    public static let limit = 5
    /// At most this many first plays, and as many last plays, of each year.
    public static let perYear = 2
    /// The furthest back a history is searched.
    static let furthestYearsAgo = 200

    public let user: Username
    /// Newest first (1 year ago before 5), first plays before last plays.
    public let milestones: [Milestone]
    /// Most years first.
    public let rituals: [Ritual]
    /// "late November": where in the year this week is, for a ritual's name.
    public let season: String

    public var isEmpty: Bool { milestones.isEmpty && rituals.isEmpty }

    /// The weeks a read must cover for `now`: each year's week of "this
    /// week, N years ago" (N from 0, the year in progress, back to the
    /// history's start) and `ritualMargin` weeks either side.
    public static func weeks(now: Date, timeZone: TimeZone, since first: Int64) -> [(yearsAgo: Int, week: ChartWeek)] {
        let finder = ChartWeekFinder(timeZone: timeZone)
        var found: [(yearsAgo: Int, week: ChartWeek)] = []
        let margin = Int64(ritualMargin) * LastFMWeekCalendar.weekLength
        for n in 0...furthestYearsAgo {
            let target = Int64(finder.target(yearsAgo: n, from: now).timeIntervalSince1970.rounded(.down))
            let week = LastFMWeekCalendar.week(containing: target)
            guard week.to + margin > first else { break }
            found.append((n, week))
        }
        return found
    }

    /// The anniversaries and rituals of `now`'s week from `charted`, the
    /// album rows of the weeks `weeks` names (and their neighbours).
    public static func build(user: Username, now: Date, timeZone: TimeZone, weeks: [(yearsAgo: Int, week: ChartWeek)],
                             charted: [ChartedAlbum]) -> Anniversaries {
        var byWeek: [ChartWeek: [ChartedAlbum]] = [:]
        for album in charted { byWeek[album.week, default: []].append(album) }
        var milestones: [Milestone] = []
        for (n, week) in weeks where isAnniversary(n) {
            let rows = (byWeek[week] ?? []).sorted { $0.plays != $1.plays ? $0.plays > $1.plays : ($0.artist, $0.name) < ($1.artist, $1.name) }
            // The most played of each kind that year: a year ago, many albums
            // were last played; the few that mattered most are the story.
            for album in rows.filter({ $0.firstWeek == week }).prefix(perYear) {
                milestones.append(Milestone(kind: .firstPlayed, yearsAgo: n, week: week, artist: album.artist, name: album.name, plays: album.plays,
                                            mbid: album.mbid))
            }
            for album in rows.filter({ $0.lastWeek == week && $0.firstWeek != week }).prefix(perYear) {
                milestones.append(Milestone(kind: .lastPlayed, yearsAgo: n, week: week, artist: album.artist, name: album.name, plays: album.plays,
                                            mbid: album.mbid))
            }
        }
        milestones.sort { a, b in
            a.yearsAgo != b.yearsAgo ? a.yearsAgo < b.yearsAgo : a.kind != b.kind ? a.kind == .firstPlayed : a.plays > b.plays
        }

        // Rituals: in how many years an album charted within the margin of
        // that year's week.
        let length = LastFMWeekCalendar.weekLength
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let thisYear = calendar.component(.year, from: now)
        struct Seen { var artist: String; var name: String; var mbid: String?; var latest: ChartWeek; var years: [Int: (ChartWeek, Int)] }
        var seen: [String: Seen] = [:]
        for (n, week) in weeks {
            for step in -Int64(ritualMargin)...Int64(ritualMargin) {
                let near = ChartWeek(from: week.from + step * length, to: week.to + step * length)
                for album in byWeek[near] ?? [] {
                    var entry = seen[album.key] ?? Seen(artist: album.artist, name: album.name, mbid: album.mbid, latest: album.week, years: [:])
                    if album.week > entry.latest { (entry.artist, entry.name, entry.latest) = (album.artist, album.name, album.week) }
                    if entry.mbid == nil { entry.mbid = album.mbid }
                    let year = thisYear - n
                    if let kept = entry.years[year], kept.1 >= album.plays {} else { entry.years[year] = (album.week, album.plays) }
                    seen[album.key] = entry
                }
            }
        }
        let rituals = seen.values.filter { $0.years.count >= ritualYears }
            .sorted { a, b in
                a.years.count != b.years.count ? a.years.count > b.years.count
                    : a.latest != b.latest ? a.latest > b.latest : (a.artist, a.name) < (b.artist, b.name)
            }
            .prefix(limit)
            .map { entry in
                let years = entry.years.keys.sorted()
                return Ritual(artist: entry.artist, name: entry.name, mbid: entry.mbid, years: years, weeks: years.map { entry.years[$0]!.0 })
            }
        return Anniversaries(user: user, milestones: milestones, rituals: Array(rituals), season: season(of: now, in: calendar))
    }

    /// Which of the albums that chart in enough years a store reads the
    /// rows of: the `limit` with the most years, the latest first, and any
    /// tied with the last of them (the names decide among those, from
    /// the rows). `counted` is each album key with its years and its
    /// latest week around this week.
    public static func ritualCandidates(_ counted: [(key: String, years: Int, latest: Int64)]) -> [String] {
        let ranked = counted.sorted { $0.years != $1.years ? $0.years > $1.years : $0.latest > $1.latest }
        guard ranked.count > limit else { return ranked.map(\.key) }
        let last = ranked[limit - 1]
        return ranked.prefix { $0.years > last.years || $0.years == last.years && $0.latest >= last.latest }.map(\.key)
    }

    /// "early March", "mid-July", "late November".
    static func season(of date: Date, in calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.month, .day], from: date)
        let month = YearInReview.monthNames[(parts.month ?? 1) - 1]
        let day = parts.day ?? 1
        return day <= 10 ? "early \(month)" : day <= 20 ? "mid-\(month)" : "late \(month)"
    }

    /// "First played ten years ago this week: Tidewater by Vetiver".
    public static func sentence(_ milestone: Milestone) -> String {
        let when = milestone.yearsAgo == 1 ? "a year ago" : "\(spelled(milestone.yearsAgo)) years ago"
        let what = milestone.kind == .firstPlayed ? "First played" : "Last played"
        return "\(what) \(when) this week: \(milestone.name) by \(milestone.artist)"
    }

    /// "Your late-November album: played in 2014, 2017, 2019 and 2023".
    public func sentence(_ ritual: Ritual, whose: String = "Your") -> String {
        "\(whose) \(season.replacingOccurrences(of: " ", with: "-")) album: \(ritual.name) by \(ritual.artist), played in \(Self.years(ritual))"
    }

    /// "Your late-November albums".
    public func ritualsHeading(whose: String) -> String { "\(whose) \(season.replacingOccurrences(of: " ", with: "-")) albums" }

    /// "2014, 2017, 2019 and 2023".
    public static func years(_ ritual: Ritual) -> String {
        let years = ritual.years.map(String.init)
        return years.count <= 1 ? years.joined() : years.dropLast().joined(separator: ", ") + " and " + years.last!
    }

    static func spelled(_ n: Int) -> String {
        let words = [5: "five", 10: "ten", 15: "fifteen", 20: "twenty", 25: "twenty-five", 30: "thirty", 35: "thirty-five", 40: "forty"]
        return words[n] ?? String(n)
    }
}
