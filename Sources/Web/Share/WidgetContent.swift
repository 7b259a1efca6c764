import Artwork
import Foundation
import VinylogueCore

/// What a person's widget shows, in all three forms (the PNG, the SVG and
/// the page for a frame): a view of the chart page's presenter, as
/// `ShareCardContent` is for cards. The covers are looked up apart (their
/// addresses come from the art rules, not from the presenter).
struct WidgetContent {
    struct Row {
        /// The album, track or artist.
        let name: String
        /// The muted line under it: the artist of an album or a track; nil
        /// for an artist row.
        let artist: String?
        let plays: String
        /// The album, for its cover; nil on artist and track rows.
        let album: (artist: String, name: String, mbid: String?)?
    }

    let user: Username
    /// "This week, 3 years ago".
    let highlight: String
    let week: String
    /// At most `WidgetCard.maxRows`.
    let rows: [Row]
    /// Why there are no rows.
    let note: String
    /// The chart page the widget links to, absolute (the widget is shown on
    /// other sites).
    let chartURL: String

    /// - Parameter byDate: whether the widget was asked for a dated week
    ///   (`?week=`): it then links to that week, else to "N years ago".
    init(_ page: WeeklyChartPage, byDate: Bool, labels: WeekLabels, base: String) {
        user = page.user
        highlight = page.yearsAgo < 1 ? "This week" : "This week, \(page.yearsAgoLabel)"
        week = page.weekLabel
        rows = page.rows.prefix(WidgetCard.maxRows).map { row in
            switch page.kind {
            case .album: Row(name: row.name, artist: row.artist, plays: row.playsLabel, album: (row.artist, row.name, row.entry.mbid))
            case .track: Row(name: row.name, artist: row.artist, plays: row.playsLabel, album: nil)
            case .artist: Row(name: row.artist, artist: nil, plays: row.playsLabel, album: nil)
            }
        }
        note = page.failure?.message ?? page.emptyText ?? "Nothing played that week."
        let path = byDate ? ShareCardContent.permalink(page, byDate: true, labels: labels)
            : Paths.chart(page.user, yearsAgo: page.yearsAgo, ChartQuery(kind: page.kind))
        chartURL = base + path
    }

    /// The albums whose covers the rows show, one place per row.
    var albums: [(artist: String, name: String, mbid: String?)?] { rows.map(\.album) }

    /// The PNG form, with the covers found for `albums`.
    func card(covers: [ArtworkAddress?]) -> WidgetCard {
        WidgetCard(title: user.value, highlight: highlight, week: week,
                   rows: rows.map { WidgetCard.Row(name: $0.name, artist: $0.artist ?? "", plays: $0.plays) }, note: note, covers: covers)
    }
}
