import Foundation
import VinylogueCore

/// Renders a `WeeklyChartPage` as a readable table for a terminal.
public struct ChartTableView: Sendable {
    public let colour: Bool

    public init(colour: Bool) { self.colour = colour }

    private func style(_ text: String, _ code: String) -> String {
        colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    public func render(_ page: WeeklyChartPage) -> String {
        var out = ""
        out += style(page.title, "1") + " · " + page.yearsAgoLabel + "\n"
        out += style(page.weekLabel, "2") + "\n"
        var nav: [String] = []
        if let previous = page.previous, previous.isEnabled { nav.append("← \(previous.label) (--years-ago \(previous.yearsAgo))") }
        if let next = page.next, next.isEnabled { nav.append("\(next.label) → (--years-ago \(next.yearsAgo))") }
        if !nav.isEmpty { out += style(nav.joined(separator: "   "), "2") + "\n" }
        out += "\n"
        if let text = page.emptyText { out += text + "\n" }
        if page.rows.isEmpty { return out + (page.hiddenText.map { $0 + "\n" } ?? "") }

        let rankWidth = page.rows.map { String($0.rank).count }.max() ?? 1
        let playsWidth = page.rows.map { $0.playsLabel.count }.max() ?? 1
        let showName = page.kind != .artist
        let artistWidth = min(32, page.rows.map { $0.artist.count }.max() ?? 0)
        for row in page.rows {
            let rank = String(repeating: " ", count: rankWidth - String(row.rank).count) + String(row.rank)
            let plays = String(repeating: " ", count: playsWidth - row.playsLabel.count) + row.playsLabel
            var line = style(rank, "2") + "  " + style(plays, "36") + "  "
            if showName {
                line += style(Self.fit(row.artist, artistWidth), "1") + "  " + row.name
            } else {
                line += style(row.artist, "1")
            }
            out += line + "\n"
        }
        if let hidden = page.hiddenText { out += "\n" + style(hidden, "2") + "\n" }
        return out
    }

    /// Pads or truncates to `width` characters.
    static func fit(_ text: String, _ width: Int) -> String {
        if text.count <= width { return text + String(repeating: " ", count: width - text.count) }
        return String(text.prefix(width - 1)) + "…"
    }
}
