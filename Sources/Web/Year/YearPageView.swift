import Foundation
import Stores
import VinylogueCore

/// What `year.mustache` reads: a person's year (`YearInReview`) with its
/// lists, months, discoveries and the weekday and hour charts drawn as
/// SVG on the server (no JavaScript), each with a table as its text.
struct YearPageView {
    struct Row {
        let rank: Int
        let artist: String
        let name: String
        let playsLabel: String
        let url: String
        let artURL: String?
    }

    struct Found {
        let artist: String
        let name: String
        let playsLabel: String
        let url: String
        let artURL: String
        let firstLabel: String
        let firstURL: String
        let lastedLabel: String
    }

    struct Month {
        let name: String
        let playsLabel: String
        let artist: String?
        let album: String?
        let url: String?
    }

    /// One bar of a small chart, in the SVG's own units.
    struct Bar {
        let label: String
        let playsText: String
        let x: Int
        let y: Int
        let width: Int
        let height: Int
        let labelX: Int
        let labelled: Bool
    }

    struct BarChart {
        let id: String
        let title: String
        let summary: String
        let width: Int
        let bars: [Bar]
        let height = 120
        let baseline = 100
    }

    var layout: LayoutFields
    let user: String
    let year: Int
    let chartURL: String
    let previousURL: String?
    let previousLabel: String?
    let nextURL: String?
    let nextLabel: String?
    let totalsText: String?
    let changeText: String?
    let albums: [Row]
    let artists: [Row]
    let tracks: [Row]
    let found: [Found]
    let months: [Month]
    let topWeekText: String?
    let topWeekURL: String?
    let charts: [BarChart]
    let emptyText: String?
    let errorText: String?
    var copyNote: String?
    /// The viewer's own history copy to start (a form), when it is theirs.
    struct CopyOffer {
        let action: String
        let label: String
    }

    var copyOffer: CopyOffer?
    var hiddenText: String?
    /// The year's most played albums, to play again (`PlaylistRoutes`).
    var playURL: String?
    let settingsURL = Paths.settings
    /// Which lists have rows (the template shows a heading only then).
    var hasAlbums = false, hasFound = false, hasArtists = false, hasTracks = false

    /// A page with nothing to show but `note` (a copy under way, no archive).
    init(user: Username, year: Int, note: String?, failure: SourceError?) {
        layout = LayoutFields(title: "\(user.value) · \(year)", csrf: "")
        self.user = user.value
        self.year = year
        chartURL = Paths.chart(user)
        (previousURL, previousLabel, nextURL, nextLabel) = (nil, nil, nil, nil)
        (totalsText, changeText, topWeekText, topWeekURL) = (nil, nil, nil, nil)
        (albums, artists, tracks, found, months, charts) = ([], [], [], [], [], [])
        emptyText = nil
        errorText = failure?.forVisitors
        copyNote = note
    }

    init(_ review: YearInReview, filter: PlayCountFilter, labels: WeekLabels) {
        let user = review.user
        layout = LayoutFields(title: "\(user.value) · \(review.year)", csrf: "")
        self.user = user.value
        year = review.year
        chartURL = Paths.chart(user)
        previousURL = review.previousYear.map { Paths.year(user, $0) }
        previousLabel = review.previousYear.map { "← \($0)" }
        nextURL = review.nextYear.map { Paths.year(user, $0) }
        nextLabel = review.nextYear.map { "\($0) →" }
        let t = review.totals
        if t.plays > 0 {
            totalsText = "\(AlbumPageView.playsGrouped(t.plays)) of \(grouped(t.albums)) albums by \(grouped(t.artists)) artists, "
                + "on \(t.days == 1 ? "one day" : "\(t.days) days")."
            changeText = review.changeSentence
            emptyText = nil
        } else {
            totalsText = nil
            changeText = nil
            emptyText = if let years = review.years {
                "\(user.value) played nothing in \(review.year). "
                    + (years.count == 1 ? "Their history is all in \(years.lowerBound)." : "Their history runs from \(years.lowerBound) to \(years.upperBound).")
            } else {
                "\(user.value) has no listens here yet."
            }
        }
        func albumRow(_ entry: YearInReview.Entry, rank: Int) -> Row {
            Row(rank: rank, artist: entry.artist, name: entry.name, playsLabel: AlbumPageView.playsGrouped(entry.plays),
                url: Paths.album(user, artist: entry.artist, name: entry.name, day: nil),
                artURL: Paths.cover(user, artist: entry.artist, name: entry.name, mbid: entry.mbid))
        }
        // The play-count filter hides albums played no more than it says, as on every chart.
        let shownAlbums = review.topAlbums.filter { $0.plays > filter.threshold }
        albums = shownAlbums.enumerated().map { albumRow($0.element, rank: $0.offset + 1) }
        playURL = review.topAlbums.isEmpty ? nil : Paths.playlistPage(user, .year(review.year))
        let hidden = review.topAlbums.count - shownAlbums.count
        hiddenText = hidden == 0 ? nil : "\(hidden == 1 ? "One album" : "\(hidden) albums") of the top \(review.topAlbums.count) hidden by your filter."
        artists = review.topArtists.enumerated().map { n, entry in
            Row(rank: n + 1, artist: entry.artist, name: entry.artist, playsLabel: AlbumPageView.playsGrouped(entry.plays),
                url: Paths.chart(user, ChartQuery(kind: .artist)), artURL: nil)
        }
        tracks = review.topTracks.enumerated().map { n, entry in
            Row(rank: n + 1, artist: entry.artist, name: entry.name, playsLabel: AlbumPageView.playsGrouped(entry.plays),
                url: Paths.chart(user, ChartQuery(kind: .track)), artURL: nil)
        }
        found = review.discoveries.filter { $0.album.plays > filter.threshold }.map { d in
            Found(artist: d.album.artist, name: d.album.name, playsLabel: AlbumPageView.playsGrouped(d.album.plays),
                  url: Paths.album(user, artist: d.album.artist, name: d.album.name, day: labels.permalinkDay(of: d.firstWeek)),
                  artURL: Paths.cover(user, artist: d.album.artist, name: d.album.name, mbid: d.album.mbid),
                  firstLabel: labels.label(for: d.firstWeek), firstURL: Paths.week(user, day: labels.permalinkDay(of: d.firstWeek)),
                  lastedLabel: d.weeks == 1 ? "in the chart one week" : "in the chart \(d.weeks) weeks, the last \(labels.label(for: d.lastWeek))")
        }
        months = review.months.map { month in
            Month(name: YearInReview.monthNames[month.month],
                  playsLabel: month.isAhead ? "still to come"
                      : month.album.map { "\(grouped($0.plays)) of \(AlbumPageView.playsGrouped(month.plays))" } ?? "nothing played",
                  artist: month.album?.artist, album: month.album?.name,
                  url: month.album.map { Paths.album(user, artist: $0.artist, name: $0.name, day: nil) })
        }
        topWeekText = review.topWeek.map { "\(labels.label(for: $0.week)), \(AlbumPageView.playsGrouped($0.plays))" }
        topWeekURL = review.topWeek.map { Paths.week(user, day: labels.permalinkDay(of: $0.week)) }
        charts = t.plays == 0 ? [] : [
            Self.chart(id: "weekdays", title: "Plays by weekday",
                       labels: YearInReview.weekdayNames.map { String($0.prefix(3)) }, names: YearInReview.weekdayNames, counts: review.weekdays,
                       labelEvery: 1),
            Self.chart(id: "hours", title: "Plays by hour (\(review.timeZone.identifier))",
                       labels: (0..<24).map { String(format: "%02d", $0) }, names: (0..<24).map { String(format: "%02d:00", $0) },
                       counts: review.hours, labelEvery: 3),
        ]
        errorText = nil
        (hasAlbums, hasFound, hasArtists, hasTracks) = (!albums.isEmpty, !found.isEmpty, !artists.isEmpty, !tracks.isEmpty)
    }

    /// Bars of `counts`, the tallest filling the chart.
    static func chart(id: String, title: String, labels: [String], names: [String], counts: [Int], labelEvery: Int) -> BarChart {
        let width = 600, gap = 4
        let slot = width / max(1, counts.count)
        let most = max(1, counts.max() ?? 1)
        let bars = counts.enumerated().map { n, count in
            let height = Int((Double(count) / Double(most) * 90).rounded())
            return Bar(label: labels[n], playsText: "\(names[n]): \(AlbumPageView.playsGrouped(count))", x: n * slot + gap / 2, y: 100 - height,
                       width: slot - gap, height: height, labelX: n * slot + slot / 2, labelled: n % labelEvery == 0)
        }
        let top = counts.indices.max { counts[$0] < counts[$1] }.map { names[$0] } ?? ""
        return BarChart(id: id, title: title, summary: "\(title): most at \(top)", width: width, bars: bars)
    }
}
