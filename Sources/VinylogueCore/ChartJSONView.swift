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
        self.init(user: page.user.value, kind: page.kind.rawValue, yearsAgo: page.yearsAgo,
                  week: page.week.map { Week(from: $0.from, to: $0.to) },
                  entries: page.entries.map { Entry(rank: $0.rank, artist: $0.artist, name: $0.name, plays: $0.plays, mbid: $0.mbid, url: $0.url) })
    }

    init(user: String, kind: String, yearsAgo: Int, week: Week?, entries: [Entry]) {
        self.user = user
        self.kind = kind
        self.yearsAgo = yearsAgo
        self.week = week
        self.entries = entries
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

    /// Pretty-printed, keys sorted, slashes unescaped: the bytes
    /// `JSONEncoder` makes of it (`StableJSON`, which `encode(to:)` feeds),
    /// written directly. A cold `/api/` chart spent as long in the encoder
    /// as in its database read; a test holds the two to the same bytes.
    public func data() -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(160 + entries.count * 160)
        out += Array("{\n  \"entries\" : [".utf8)
        if entries.isEmpty {
            out += Array("\n\n  ]".utf8)
        } else {
            out.append(0x0A)
            for (index, entry) in entries.enumerated() {
                out += Array("    {\n      \"artist\" : ".utf8)
                Self.append(entry.artist, to: &out)
                if let mbid = entry.mbid {
                    out += Array(",\n      \"mbid\" : ".utf8)
                    Self.append(mbid, to: &out)
                }
                out += Array(",\n      \"name\" : ".utf8)
                Self.append(entry.name, to: &out)
                out += Array(",\n      \"plays\" : \(entry.plays),\n      \"rank\" : \(entry.rank)".utf8)
                if let url = entry.url {
                    out += Array(",\n      \"url\" : ".utf8)
                    Self.append(url, to: &out)
                }
                out += Array((index == entries.count - 1 ? "\n    }\n" : "\n    },\n").utf8)
            }
            out += Array("  ]".utf8)
        }
        out += Array(",\n  \"kind\" : ".utf8)
        Self.append(kind, to: &out)
        out += Array(",\n  \"user\" : ".utf8)
        Self.append(user, to: &out)
        if let week {
            out += Array(",\n  \"week\" : {\n    \"from\" : \(week.from),\n    \"to\" : \(week.to)\n  }".utf8)
        } else {
            out += Array(",\n  \"week\" : null".utf8)
        }
        out += Array(",\n  \"yearsAgo\" : \(yearsAgo)\n}".utf8)
        return Data(out)
    }

    /// `text` as a JSON string, escaped as `JSONEncoder` escapes it: the
    /// quote, the backslash and control characters (short forms where JSON
    /// has them, else `\u00xx`); everything else as its UTF-8 bytes.
    static func append(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
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
