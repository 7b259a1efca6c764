import HTTPServing
import Artwork
import Foundation
import VinylogueCore

/// What `chart.mustache` reads: a `WeeklyChartPage` turned into strings and
/// links for the browser.
struct ChartPageView {
    /// One chart row: an album (with its cover, linking to its page), an
    /// artist or a track (with a lettered square, linking to Last.fm).
    struct Row {
        /// The muted line above the name: the artist of an album or a
        /// track; nil for an artist row (the name is the artist).
        let artist: String?
        /// The album, track or artist.
        let name: String
        let playsLabel: String
        /// The cover, for album rows only.
        let artURL: String?
        /// The lettered square standing in for a picture on artist and track rows.
        let monogram: Monogram?
        let url: String
        /// Whether `url` leaves the site (Last.fm's page of the artist or track).
        let external: Bool
    }

    /// Letters on a coloured square, for artists and tracks, which have no
    /// cover: drawn by the stylesheet, so no request fetches anything.
    struct Monogram {
        /// "P" for PUP, "AM" for Against Me!, "DW" for The Distant Wolves: the first
        /// letters of the first two words, after a leading article.
        let letters: String
        /// One of the stylesheet's `hue-0` … `hue-11`, the same for the same artist.
        let hue: Int

        init(_ name: String) {
            var words = name.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
            // "The Distant Wolves" is DW, not TD.
            if words.count > 1, ["the", "a", "an"].contains(words[0].lowercased()) { words.removeFirst() }
            let letters = words.prefix(2).compactMap(\.first).map { String($0).uppercased() }.joined()
            self.letters = letters.isEmpty ? "♪" : letters
            hue = Int(NameHash(name.lowercased()).value % 12)
        }
    }

    struct YearLink {
        let label: String
        let url: String
        let enabled: Bool
    }

    /// One of the three links of the kind switcher.
    struct KindLink {
        /// "Albums", "Artists", "Tracks".
        let label: String
        let url: String
        let current: Bool
    }

    /// One choice of the page's play-count filter form.
    struct FilterChoice {
        let value: Int
        let label: String
        let selected: Bool
    }

    /// A hidden field of the filter form, so submitting it keeps the kind.
    struct HiddenField {
        let name: String
        let value: String
    }

    var layout: LayoutFields

    let user: String
    /// The person's profile on their own service, which the name links to;
    /// nil for the demo's people, whom no service knows.
    var profileURL: String?
    let yearsAgoLabel: String
    let weekLabel: String
    /// This user's every-year page, of the same kind.
    let historyURL: String
    let rediscoverURL: String
    /// The year in review of the week's year ("2019"), and its page.
    let yearLabel: String
    /// Nil when the person's year cannot be counted here (not archived).
    var yearURL: String?
    /// The week as playlist files (archived people's album charts N years ago).
    var playXSPF: String?
    var playJSPF: String?
    /// The week's page to play it again (a music server's playlist).
    var playPage: String?
    let previous: YearLink?
    let next: YearLink?
    let previousURL: String
    let nextURL: String
    let kinds: [KindLink]
    let rows: [Row]
    let hasRows: Bool
    let emptyText: String?
    let errorText: String?
    let hiddenText: String?
    let retryURL: String
    /// Whether the failure may pass if asked again (`SourceError.retryMayHelp`).
    let canRetry: Bool
    var staleNote: String?
    /// What the person's player says is playing now ("Now playing: …"),
    /// while it lasts; such a page is never kept.
    var nowPlaying: String?
    /// How far the copy of the person's history has come, while it runs;
    /// such a page is never kept.
    var copyNote: String?
    /// Outside the user's history: the nearest year with charts, as a way on.
    let wayOn: YearLink?
    /// The code to show this chart's widget on one's own page (album
    /// charts that loaded).
    var widget: WidgetSnippets?
    /// Albums first or last played exactly this many years ago this week
    /// (an archived person's album chart, on an anniversary's week).
    var moments: [HistoryRoutes.Moment] = []
    var hasMoments = false
    /// The filter form: a GET to this page's own address.
    let filterAction: String
    let filterLabel: String
    let filterFields: [HiddenField]
    let filterChoices: [FilterChoice]

    /// - Parameter byDate: whether the page was asked for by date (links
    ///   then stay dated) rather than by "years ago".
    /// - Parameter options: the kind and the filter the address asked for,
    ///   kept by every link to another week or kind.
    init(_ page: WeeklyChartPage, byDate: Bool, options: ChartQuery, selfURL: String, labels: WeekLabels) {
        let user = page.user
        func address(yearsAgo: Int, target: Date, _ options: ChartQuery) -> String {
            byDate ? Paths.week(user, day: labels.isoDay(target), options) : Paths.chart(user, yearsAgo: yearsAgo, options)
        }
        func link(_ n: WeeklyChartPage.Neighbour?) -> YearLink? {
            guard let n else { return nil }
            return YearLink(label: n.label, url: address(yearsAgo: n.yearsAgo, target: n.target, options), enabled: n.isEnabled)
        }
        previous = link(page.previous)
        next = link(page.next)
        previousURL = previous.flatMap { $0.enabled ? $0.url : nil } ?? ""
        nextURL = next.flatMap { $0.enabled ? $0.url : nil } ?? ""
        // The Atom feed is of albums: it keeps the years, not the kind.
        layout = LayoutFields(title: "\(user.value) · \(page.yearsAgoLabel)" + (page.kind == .album ? "" : " · \(page.kind.plural)"), csrf: "",
                              bodyClass: "chart-page",
                              feedURL: Paths.feed(user) + (page.yearsAgo > 1 && !byDate ? "?years_ago=\(page.yearsAgo)" : ""),
                              prefetchURL: previousURL.isEmpty ? nil : previousURL)
        self.user = user.value
        profileURL = user.service == .listenBrainz ? "https://listenbrainz.org/user/\(user.serviceName)/" : "https://www.last.fm/user/\(user.value)"
        yearsAgoLabel = page.yearsAgoLabel
        weekLabel = page.weekLabel
        historyURL = Paths.history(user, kind: page.kind)
        rediscoverURL = "/u/\(user.value)/rediscover"
        // The year the week's label counts it in (the same on the page by date).
        let year = page.week.map(labels.year(of:)) ?? labels.year(of: page.target)
        yearLabel = String(year)
        yearURL = Paths.year(user, year)
        kinds = ChartKind.allCases.map { kind in
            KindLink(label: kind.plural.capitalized, url: address(yearsAgo: page.yearsAgo, target: page.target, options.with(kind: kind)),
                     current: kind == page.kind)
        }
        let day = page.week.map(labels.permalinkDay(of:))
        rows = page.rows.map { Row($0, kind: page.kind, of: user, day: day) }
        hasRows = !rows.isEmpty
        emptyText = page.emptyText
        errorText = page.failure?.forVisitors
        hiddenText = page.hiddenText
        retryURL = selfURL
        canRetry = page.failure?.retryMayHelp ?? false
        if case .noChart = page.state {
            wayOn = [previous, next].compactMap { $0 }.first { $0.enabled }
        } else {
            wayOn = nil
        }
        filterAction = byDate ? Paths.week(user, day: labels.isoDay(page.target)) : Paths.chart(user)
        filterLabel = "Hide \(page.kind.plural) played"
        filterFields = (byDate || page.yearsAgo == 1 ? [] : [HiddenField(name: "years_ago", value: String(page.yearsAgo))])
            + (page.kind == .album ? [] : [HiddenField(name: "kind", value: page.kind.rawValue)])
        var choices = PlayCountFilter.choices
        if !choices.contains(page.filter.threshold) { choices = (choices + [page.filter.threshold]).sorted() }
        filterChoices = choices.map { n in
            FilterChoice(value: n, label: n == 0 ? "Show every \(page.kind.rawValue)" : "\(WeekLabels.plays(n)) or fewer",
                         selected: n == page.filter.threshold)
        }
    }
}

extension ChartPageView.Row {
    /// A row of a chart of `kind`: album rows link to the album's page for
    /// the week of `day`; artist and track rows to Last.fm.
    init(_ row: WeeklyChartPage.Row, kind: ChartKind, of user: Username, day: String?) {
        switch kind {
        case .album:
            self.init(album: row, of: user, day: day)
        case .artist:
            self.init(artist: nil, name: row.artist, playsLabel: row.playsLabel, artURL: nil, monogram: .init(row.artist),
                      url: Self.lastFM(artist: row.artist, track: nil), external: true)
        case .track:
            self.init(artist: row.artist, name: row.name, playsLabel: row.playsLabel, artURL: nil, monogram: .init(row.artist),
                      url: Self.lastFM(artist: row.artist, track: row.name), external: true)
        }
    }

    /// An album row: its cover, and a link to its page for the week of `day`.
    init(album row: WeeklyChartPage.Row, of user: Username, day: String?) {
        self.init(artist: row.artist, name: row.name, playsLabel: row.playsLabel,
                  artURL: Paths.cover(user, artist: row.artist, name: row.name, mbid: row.entry.mbid), monogram: nil,
                  url: Paths.album(user, artist: row.artist, name: row.name, day: day), external: false)
    }

    /// Last.fm's page of an artist or a track, built from the names (never
    /// from a URL in the data, which could point anywhere).
    static func lastFM(artist: String, track: String?) -> String {
        func segment(_ s: String) -> String { Paths.encode(s).replacingOccurrences(of: "%20", with: "+") }
        return "https://www.last.fm/music/\(segment(artist))" + (track.map { "/_/\(segment($0))" } ?? "")
    }
}
