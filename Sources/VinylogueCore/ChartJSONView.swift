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
    public func data() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}
