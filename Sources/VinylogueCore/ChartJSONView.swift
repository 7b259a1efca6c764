import Foundation

/// The stable JSON form of a chart page, shared by `vinylogue chart --json`
/// and the web app's `/api/` routes:
///
///     {"user": "ybsc", "kind": "album", "yearsAgo": 6,
///      "week": {"from": 1593950400, "to": 1594555200},
///      "entries": [{"rank": 1, "artist": "PUP", "name": "...", "plays": 22,
///                   "mbid": "...", "url": "https://www.last.fm/..."}]}
///
/// `week` is null when the history has no chart for the target week;
/// `mbid` and `url` are left out when unknown.
public struct ChartJSONView: Encodable, Sendable {
    struct Week: Encodable { let from: Int64; let to: Int64 }
    struct Entry: Encodable {
        let rank: Int
        let artist: String
        let name: String
        let plays: Int
        let mbid: String?
        let url: String?
    }

    let user: String
    let kind: String
    let yearsAgo: Int
    let week: Week?
    let entries: [Entry]

    public init(_ page: WeeklyChartPage) {
        user = page.user.value
        kind = page.kind.rawValue
        yearsAgo = page.yearsAgo
        week = page.week.map { Week(from: $0.from, to: $0.to) }
        entries = page.entries.map { Entry(rank: $0.rank, artist: $0.artist, name: $0.name, plays: $0.plays, mbid: $0.mbid, url: $0.url) }
    }

    enum CodingKeys: String, CodingKey { case user, kind, yearsAgo, week, entries }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(user, forKey: .user)
        try c.encode(kind, forKey: .kind)
        try c.encode(yearsAgo, forKey: .yearsAgo)
        try c.encode(week, forKey: .week)  // explicit null when absent
        try c.encode(entries, forKey: .entries)
    }

    /// Pretty-printed, keys sorted, slashes unescaped.
    public func data() -> Data { StableJSON.data(self) }
}

/// The stable JSON form of the every-year page, printed by
/// `vinylogue history --json`:
///
///     {"user": "ybsc", "kind": "album",
///      "years": [{"yearsAgo": 1, "year": 2025,
///                 "week": {"from": 1732363200, "to": 1732968000},
///                 "entries": [{"rank": 1, "artist": "PUP", "name": "...", "plays": 22}]}]}
///
/// `year` is the calendar year of the week's start in the reader's time zone.
public struct EveryYearJSONView: Encodable, Sendable {
    struct Week: Encodable { let from: Int64; let to: Int64 }
    struct Entry: Encodable {
        let rank: Int
        let artist: String
        let name: String
        let plays: Int
    }
    struct Year: Encodable {
        let yearsAgo: Int
        let year: Int
        let week: Week
        let entries: [Entry]
    }

    let user: String
    let kind: String
    let years: [Year]

    public init(_ page: EveryYearPage, timeZone: TimeZone) {
        let labels = WeekLabels(timeZone: timeZone)
        user = page.user.value
        kind = page.kind.rawValue
        years = page.years.map { year in
            Year(yearsAgo: year.yearsAgo, year: labels.year(of: year.week.fromDate),
                 week: Week(from: year.week.from, to: year.week.to),
                 entries: year.rows.map { Entry(rank: $0.rank, artist: $0.artist, name: $0.name, plays: $0.plays) })
        }
    }

    /// Pretty-printed, keys sorted, slashes unescaped.
    public func data() -> Data { StableJSON.data(self) }
}

/// The command line's and the API's JSON layout: pretty-printed, keys
/// sorted, slashes unescaped, so output diffs cleanly between runs.
enum StableJSON {
    static func data(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
}
