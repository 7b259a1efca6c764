import Foundation
import Testing
@testable import VinylogueCore

/// The chart's JSON is written by hand for speed; it must stay the bytes
/// `JSONEncoder` makes of the same view (pretty-printed, keys sorted,
/// slashes unescaped), which the command line and `/api/` have always sent.
@Suite struct ChartJSONViewTests {
    /// Names that test every escape: quotes, backslashes, each control
    /// character, DEL, slashes, non-ASCII, an emoji, line separators.
    static let awkward: [String] = [
        "", "PUP", "Quote \" and \\ backslash", "AC/DC", "Tab\there\nand\r\nlines", "\u{8}\u{c}\u{0}\u{1}\u{1f}\u{7f}",
        "Sigur Rós", "坂本龍一", "🎸 Emoji", "sep\u{2028}par\u{2029}", String((0..<32).map { Character(UnicodeScalar($0)!) }),
    ]

    static func view(entries: [ChartJSONView.Entry], week: ChartJSONView.Week?, user: String = "RJ", kind: String = "album") -> ChartJSONView {
        ChartJSONView(user: user, kind: kind, yearsAgo: 3, week: week, entries: entries)
    }

    @Test func anEmptyChartAndAMissingWeekAreTheEncodersBytes() {
        for week in [nil, ChartJSONView.Week(from: 1_593_950_400, to: 1_594_555_200)] {
            let view = Self.view(entries: [], week: week)
            #expect(view.data() == StableJSON.data(view), "\(String(decoding: view.data(), as: UTF8.self))")
        }
    }

    @Test func everyEscapeIsTheEncodersBytes() {
        for (index, text) in Self.awkward.enumerated() {
            let entries = [
                ChartJSONView.Entry(rank: 1, artist: text, name: text, plays: 22, mbid: text, url: "https://www.last.fm/music/" + text),
                ChartJSONView.Entry(rank: 2, artist: "a", name: text, plays: index, mbid: nil, url: nil),
            ]
            let view = Self.view(entries: entries, week: ChartJSONView.Week(from: -5, to: Int64.max), user: text, kind: text)
            #expect(view.data() == StableJSON.data(view), "\(text.unicodeScalars.map { $0.value })")
        }
    }

    /// Random charts of random names (a seeded generator: a failure repeats).
    @Test func randomChartsAreTheEncodersBytes() {
        var generator = SplitMix64(seed: 37)
        let pieces = Self.awkward + ["x", "The Open Sparrows", "/", "\\u0041", "{}", "[],", ":"]
        for _ in 0..<300 {
            let count = Int.random(in: 0...12, using: &generator)
            let entries = (0..<count).map { rank in
                ChartJSONView.Entry(rank: rank + 1, artist: pieces.randomElement(using: &generator)! + pieces.randomElement(using: &generator)!,
                                    name: pieces.randomElement(using: &generator)!, plays: Int.random(in: 0...100_000, using: &generator),
                                    mbid: Bool.random(using: &generator) ? pieces.randomElement(using: &generator) : nil,
                                    url: Bool.random(using: &generator) ? pieces.randomElement(using: &generator) : nil)
            }
            let week = Bool.random(using: &generator) ? ChartJSONView.Week(from: .random(in: 0...2_000_000_000, using: &generator),
                                                                           to: .random(in: 0...2_000_000_000, using: &generator)) : nil
            let view = Self.view(entries: entries, week: week, user: pieces.randomElement(using: &generator)!)
            #expect(view.data() == StableJSON.data(view))
        }
    }

}
