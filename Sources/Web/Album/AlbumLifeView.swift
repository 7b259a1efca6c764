import Foundation
import VinylogueCore

/// What `album.mustache` reads for an album's life (`AlbumLife`): the
/// figures, and plays per year as an SVG bar chart drawn on the server
/// (readable without JavaScript), with a table as its text alternative.
struct AlbumLifeView {
    /// One bar of the chart, in the SVG's own units.
    struct Bar {
        let year: Int
        let playsText: String
        let x: Int
        let y: Int
        let width: Int
        let height: Int
        let labelX: Int
        /// Only some years are labelled when there are many.
        let labelled: Bool
        /// The person's year in review.
        let url: String
    }

    let first: String
    let firstURL: String
    let last: String
    let lastURL: String
    let total: String
    let weeksInChart: String
    let bestRank: Int
    let bestLabel: String
    let bestPlays: String
    let bestURL: String
    let thenText: String?
    let nowText: String
    /// Its tracks as played, to play again (`PlaylistRoutes`).
    let playURL: String

    static let chartWidth = 600
    /// The widest a year's bar is drawn: an album of one or two years is
    /// a bar or two, not a block across the chart.
    static let widestBar = 48
    static let baseline = 140
    let chartWidth = Self.chartWidth
    let chartHeight = 160
    let baseline = Self.baseline
    let bars: [Bar]
    /// The chart in one sentence, its accessible name.
    let summary: String
    let years: [AlbumLife.Year]

    init(_ life: AlbumLife, labels: WeekLabels) {
        let user = life.user
        func url(_ week: ChartWeek) -> String { Paths.week(user, day: labels.permalinkDay(of: week)) }
        first = labels.label(for: life.firstWeek)
        firstURL = url(life.firstWeek)
        last = labels.label(for: life.lastWeek)
        lastURL = url(life.lastWeek)
        total = AlbumPageView.playsGrouped(life.totalPlays)
        weeksInChart = life.weeksInChart == 1 ? "1 week" : "\(life.weeksInChart) weeks"
        bestRank = life.bestRank
        bestLabel = labels.label(for: life.bestWeek)
        bestPlays = WeekLabels.plays(life.bestWeekPlays)
        bestURL = url(life.bestWeek)
        thenText = if let week = life.thenWeek, let plays = life.thenPlays { "\(WeekLabels.plays(plays)) in \(labels.label(for: week))" } else { nil }
        nowText = "\(WeekLabels.plays(life.lastTwelveMonthsPlays)) in the last 12 months"
        playURL = Paths.playlistPage(user, .album(artist: life.artist, name: life.name))
        years = life.years
        let most = max(1, life.years.map(\.plays).max() ?? 1)
        let (chartWidth, baseline) = (Self.chartWidth, Self.baseline)
        let slot = chartWidth / max(1, life.years.count)
        let every = max(1, (life.years.count + 9) / 10)
        bars = life.years.enumerated().map { n, year in
            let height = year.plays == 0 ? 0 : max(2, (baseline - 10) * year.plays / most)
            let width = min(Self.widestBar, max(2, slot * 7 / 10))
            return Bar(year: year.year, playsText: WeekLabels.plays(year.plays), x: n * slot + (slot - width) / 2, y: baseline - height,
                       width: width, height: height, labelX: n * slot + slot / 2, labelled: n % every == 0 || n == life.years.count - 1,
                       url: Paths.year(user, year.year))
        }
        summary = "Plays per year: " + life.years.map { "\($0.year): \($0.plays)" }.joined(separator: ", ")
    }
}
