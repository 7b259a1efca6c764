import Foundation
import VinylogueCore

/// What `chart.mustache` reads: a `WeeklyChartPage` turned into strings and
/// links for the browser.
struct ChartPageView {
    struct Row {
        let artist: String
        let name: String
        let playsLabel: String
        let artURL: String
        let albumURL: String
    }

    struct YearLink {
        let label: String
        let url: String
        let enabled: Bool
    }

    var layout: LayoutFields

    let user: String
    let yearsAgoLabel: String
    let weekLabel: String
    /// This user's every-year page.
    let historyURL: String
    let previous: YearLink?
    let next: YearLink?
    let previousURL: String
    let nextURL: String
    let rows: [Row]
    let hasRows: Bool
    let emptyText: String?
    let errorText: String?
    let hiddenText: String?
    let retryURL: String
    var staleNote: String?
    /// Outside the user's history: the nearest year with charts, as a way on.
    let wayOn: YearLink?

    /// - Parameter byDate: whether the page was asked for by date (links
    ///   then stay dated) rather than by "years ago".
    init(_ page: WeeklyChartPage, byDate: Bool, selfURL: String, csrf: String, labels: WeekLabels) {
        let user = page.user
        func link(_ n: WeeklyChartPage.Neighbour?) -> YearLink? {
            guard let n else { return nil }
            let url = byDate ? Paths.week(user, day: labels.isoDay(n.target)) : Paths.chart(user, yearsAgo: n.yearsAgo)
            return YearLink(label: n.label, url: url, enabled: n.isEnabled)
        }
        previous = link(page.previous)
        next = link(page.next)
        previousURL = previous.flatMap { $0.enabled ? $0.url : nil } ?? ""
        nextURL = next.flatMap { $0.enabled ? $0.url : nil } ?? ""
        layout = LayoutFields(title: "\(user.value) · \(page.yearsAgoLabel)", csrf: csrf, bodyClass: "chart-page",
                              feedURL: Paths.feed(user) + (page.yearsAgo > 1 && !byDate ? "?years_ago=\(page.yearsAgo)" : ""), prefetchURL: previousURL.isEmpty ? nil : previousURL)
        self.user = user.value
        yearsAgoLabel = page.yearsAgoLabel
        weekLabel = page.weekLabel
        historyURL = Paths.history(user)
        let day = page.week.map(labels.permalinkDay(of:))
        rows = page.rows.map { row in
            page.kind == .album ? Row(album: row, of: user, day: day)
                : Row(artist: row.artist, name: row.name, playsLabel: row.playsLabel, artURL: Paths.placeholderCover,
                      albumURL: "https://www.last.fm/music/\(Paths.encode(row.artist))")
        }
        hasRows = !rows.isEmpty
        emptyText = page.emptyText
        errorText = page.failure?.forVisitors
        hiddenText = page.hiddenText
        retryURL = selfURL
        if case .noChart = page.state {
            wayOn = [previous, next].compactMap { $0 }.first { $0.enabled }
        } else {
            wayOn = nil
        }
    }
}

extension ChartPageView.Row {
    /// An album row: its cover, and a link to its page for the week of `day`.
    init(album row: WeeklyChartPage.Row, of user: Username, day: String?) {
        self.init(artist: row.artist, name: row.name, playsLabel: row.playsLabel,
                  artURL: Paths.cover(user, artist: row.artist, name: row.name, mbid: row.entry.mbid),
                  albumURL: Paths.album(user, artist: row.artist, name: row.name, day: day))
    }
}
