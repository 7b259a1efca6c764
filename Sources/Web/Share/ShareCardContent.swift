import Artwork
import Foundation
import VinylogueCore

/// What each shareable page puts on its card and in its meta tags: a view
/// of the page's presenter, like the page's own view struct. The card's
/// covers are given separately (their addresses come from the art rules,
/// not from the presenter).
enum ShareCardContent {
    // MARK: A week's chart

    /// The chart page's permalink: the dated week, which does not drift as
    /// "N years ago" does; the asked path when there is no week.
    static func permalink(_ page: WeeklyChartPage, byDate: Bool, labels: WeekLabels) -> String {
        let kind = ChartQuery(kind: page.kind)
        if let week = page.week { return Paths.week(page.user, day: labels.permalinkDay(of: week), kind) }
        if byDate { return Paths.week(page.user, day: labels.isoDay(page.target), kind) }
        return Paths.chart(page.user, yearsAgo: page.yearsAgo, kind)
    }

    static func links(_ page: WeeklyChartPage, byDate: Bool, labels: WeekLabels, base: String) -> ShareLinks {
        ShareLinks(base: base, permalink: permalink(page, byDate: byDate, labels: labels),
                   title: "\(page.user.value) · \(page.yearsAgoLabel)", description: summary(page))
    }

    /// Title, "N years ago", the week's dates, its top entry, its number and size.
    static func card(_ page: WeeklyChartPage, covers: [ArtworkAddress], labels: WeekLabels, now: Date) -> ShareCard {
        guard let week = page.week, !page.rows.isEmpty else {
            return ShareCard(title: page.user.value, highlight: page.yearsAgoLabel, details: [page.weekLabel, summary(page)], covers: covers)
        }
        let top = page.rows[0]
        let noun = page.rows.count == 1 ? page.kind.rawValue : page.kind.plural
        return ShareCard(title: page.user.value, highlight: yearsAgo(week, now: now),
                         details: [labels.range(of: week), "#1 " + (page.kind == .artist ? top.artist : "\(top.artist) – \(top.name)"),
                                   "Week \(labels.weekNumber(of: week)) · \(page.rows.count) \(noun)"],
                         covers: covers)
    }

    /// "1 year ago" for a week about a year before `now`. The presenter
    /// counts whole calendar years from a dated page's date, which calls
    /// last year's week "This year" until its anniversary has passed; a
    /// card is drawn for the dated permalink of a "1 year ago" page, so it
    /// counts from the middle of the week, to the nearest year.
    static func yearsAgo(_ week: ChartWeek, now: Date) -> String {
        let middle = week.fromDate.addingTimeInterval(week.toDate.timeIntervalSince(week.fromDate) / 2)
        return WeekLabels.yearsAgo(Int((now.timeIntervalSince(middle) / (365.2425 * 86_400)).rounded()))
    }

    /// "#1 PUP – Live at The Electric Ballroom, and 11 more", or why there is nothing.
    static func summary(_ page: WeeklyChartPage) -> String {
        if let failure = page.failure { return failure.message }
        guard let top = page.rows.first else { return page.emptyText ?? "Nothing played that week." }
        let name = page.kind == .artist ? top.artist : "\(top.artist) – \(top.name)"
        let more = page.rows.count > 1 ? ", and \(page.rows.count - 1) more" : ""
        return "#1 \(name)\(more)"
    }

    // MARK: Every year

    static func links(_ page: EveryYearPage, base: String) -> ShareLinks {
        ShareLinks(base: base, permalink: Paths.history(page.user, kind: page.kind),
                   title: "\(page.user.value) · this week, every year" + (page.kind == .album ? "" : " · \(page.kind.plural)"),
                   description: summary(page))
    }

    static func card(_ page: EveryYearPage, covers: [ArtworkAddress], labels: WeekLabels) -> ShareCard {
        var details = [summary(page)]
        if let oldest = page.years.last { details.append("Back to \(labels.range(of: oldest.week))") }
        return ShareCard(title: page.user.value, highlight: "This week, every year", details: details, covers: covers)
    }

    static func summary(_ page: EveryYearPage) -> String {
        if let failure = page.failure { return failure.message }
        let count = page.years.count
        guard count > 0 else { return page.emptyText ?? "No earlier year has a chart for this week." }
        return count == 1 ? "1 earlier year with a chart" : "\(count) earlier years with charts"
    }

    /// Each year's top album, newest year first.
    static func topAlbums(_ page: EveryYearPage) -> [WeeklyChartPage.Row] {
        page.kind == .album ? page.years.compactMap(\.rows.first) : []
    }

    // MARK: A year

    static func links(_ review: YearInReview, base: String) -> ShareLinks {
        ShareLinks(base: base, permalink: Paths.year(review.user, review.year), title: "\(review.user.value) · \(review.year) in review",
                   description: summary(review))
    }

    /// The year, its plays, its #1 album and what was found; the top covers.
    static func card(_ review: YearInReview, covers: [ArtworkAddress]) -> ShareCard {
        var details = [summary(review)]
        let top = review.topAlbums.first, found = review.discoveries.first?.album
        if let top { details.append("#1 \(top.artist) – \(top.name)" + (found == top ? ", found that year" : "")) }
        if let found, found != top { details.append("Found: \(found.artist) – \(found.name)") }
        return ShareCard(title: review.user.value, highlight: String(review.year), details: details, covers: covers)
    }

    /// A card for a year that could not be counted (`note` or `failure` says why).
    static func card(user: Username, year: Int, note: String) -> ShareCard {
        ShareCard(title: user.value, highlight: String(year), details: [note], covers: [])
    }

    /// "5,707 plays of 438 albums by 345 artists".
    static func summary(_ review: YearInReview) -> String {
        let t = review.totals
        guard t.plays > 0 else { return "Nothing played in \(review.year)." }
        return "\(t.plays == 1 ? "1 play" : "\(grouped(t.plays)) plays") of \(grouped(t.albums)) albums by \(grouped(t.artists)) artists"
    }

    // MARK: One album

    static func permalink(_ page: AlbumPage, labels: WeekLabels) -> String {
        Paths.album(page.user, artist: page.artist, name: page.name, day: page.week.map(labels.permalinkDay(of:)))
    }

    static func links(_ page: AlbumPage, labels: WeekLabels, base: String) -> ShareLinks {
        ShareLinks(base: base, permalink: permalink(page, labels: labels), title: "\(page.name) · \(page.artist)",
                   description: "\(page.user.value) · \(page.weekLabel)" + (page.weekPlays.map { " · \(WeekLabels.plays($0))" } ?? ""))
    }

    static func card(_ page: AlbumPage, cover: ArtworkAddress?, labels: WeekLabels) -> ShareCard {
        var details = [page.week.map(labels.range(of:)) ?? page.weekLabel]
        details.append(page.user.value + (page.weekPlays.map { " · \(WeekLabels.plays($0)) that week" } ?? ""))
        if let failure = page.failure { details.append(failure.message) }
        return ShareCard(title: page.name, highlight: page.artist, details: details, covers: cover.map { [$0] } ?? [])
    }
}
