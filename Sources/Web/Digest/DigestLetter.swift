import Foundation
import HTTPServing
import Stores
import VinylogueCore
import Workers

/// Writes the weekly digest and the confirmation email from what the web
/// pages show: the every-year page's years, up to the person's N, with
/// links back to the pages.
struct DigestWriter: DigestLetters {
    /// Where the links point: the server's public address.
    let address: PublicAddress
    let pages: PageRenderer

    /// The public address without a trailing slash.
    var base: String { address.base }

    /// What one year of the digest shows.
    struct YearView {
        let yearsAgoLabel: String
        let weekLabel: String
        let url: String
        /// The week's page to play it again (an archived person's).
        let playURL: String?
        let rows: [RowView]
        let moreText: String?
    }

    struct RowView {
        let rank: Int
        let artist: String
        let name: String
        let playsLabel: String
        let albumURL: String
        /// `cid:…`, or nil when the album has no cover to show.
        let imageSource: String?
        let alt: String
    }

    struct View {
        let subject: String
        let heading: String
        let intro: String
        let years: [YearView]
        /// This week's anniversaries and rituals.
        let moments: [String]
        let hasMoments: Bool
        /// The weekly playlist the person's music server keeps, and its page.
        let keptText: String?
        let keptURL: String?
        let scheduleSentence: String
        let settingsURL: String
        let unsubscribeURL: String
    }

    /// The digest of `user`'s `years` (the every-year page's, cut to the
    /// years asked for), or nil when there is none. `covers` has the cover
    /// of each album that has one, by artist and name.
    package func digest(of user: Username, years shown: [EveryYearPage.Year], moments: [String], playable: Bool, kept: Int?, subscription: DigestSubscription,
                        timeZone: TimeZone, covers: [AlbumKey: (contentType: String, bytes: Data)]) -> DigestLetter? {
        guard let first = shown.first, let top = first.rows.first else { return nil }
        let labels = WeekLabels(timeZone: timeZone)
        var carried: [DigestLetter.Cover] = []
        var carriedIDs: [AlbumKey: String] = [:]
        let years = shown.map { year in
            let day = labels.permalinkDay(of: year.week)
            let rows = year.rows.map { row in
                let key = AlbumKey(artist: row.artist, album: row.name)
                var source: String?
                if let id = carriedIDs[key] {
                    source = "cid:" + id
                } else if let cover = covers[key] {
                    let id = "cover-\(carried.count + 1)@vinylogue"
                    carried.append(DigestLetter.Cover(contentID: id, contentType: cover.contentType, bytes: cover.bytes))
                    carriedIDs[key] = id
                    source = "cid:" + id
                }
                return RowView(rank: row.rank, artist: row.artist, name: row.name, playsLabel: row.playsLabel,
                               albumURL: base + Paths.album(user, artist: row.artist, name: row.name, day: day), imageSource: source,
                               alt: "\(row.name) by \(row.artist)")
            }
            return YearView(yearsAgoLabel: Self.capitalised(Self.ago(year.yearsAgo)), weekLabel: year.weekLabel,
                            url: base + Paths.week(user, day: day),
                            playURL: playable ? base + Paths.playlistPage(user, yearsAgo: year.yearsAgo) : nil, rows: rows, moreText: year.moreText)
        }
        let subject = "This week \(Self.ago(first.yearsAgo)): \(top.name) by \(top.artist)"
        let view = View(subject: subject, heading: "This week, years ago",
                        intro: "What \(user.value) was listening to in this same week of earlier years.",
                        years: years, moments: moments.map(Self.oneLine), hasMoments: !moments.isEmpty,
                        keptText: kept.map { "Your music server keeps “\(WeekPlaylist.title(yearsAgo: $0))”, made again for this week." },
                        keptURL: kept.map { base + Paths.playlistPage(user, yearsAgo: $0) }, scheduleSentence: Self.scheduleSentence(subscription, timeZone: timeZone),
                        settingsURL: base + Paths.settings + "#digest",
                        unsubscribeURL: base + Paths.digestUnsubscribe(token: subscription.token))
        return DigestLetter(subject: subject, text: text(view), html: pages.html("digest-email", view), covers: carried)
    }

    /// The email that confirms an address: one link.
    package func unsubscribeAddress(token: String) -> String { base + Paths.digestUnsubscribe(token: token) }

    package func confirmation(of subscription: DigestSubscription, person: Username) -> DigestLetter {
        let link = base + Paths.digestConfirm(token: subscription.token)
        let subject = "Confirm your Vinylogue digest"
        let text = """
            Someone, probably you, asked Vinylogue to send \(person.value)'s weekly digest to this address: \
            what they were listening to in this same week of earlier years.

            To confirm, open this link:
            \(link)

            If it was not you, ignore this email: nothing is sent until the link is opened.
            """
        let view = ConfirmationView(subject: subject, person: person.value, confirmURL: link)
        return DigestLetter(subject: subject, text: Self.crlfFree(text), html: pages.html("digest-confirm-email", view), covers: [])
    }

    struct ConfirmationView {
        let subject: String
        let person: String
        let confirmURL: String
    }

    func text(_ view: View) -> String {
        var lines = [view.heading, view.intro, ""]
        if let kept = view.keptText, let url = view.keptURL {
            lines.append(kept)
            lines.append("  " + url)
            lines.append("")
        }
        if view.hasMoments {
            lines.append("This week in the history:")
            for moment in view.moments { lines.append("  " + moment) }
            lines.append("")
        }
        for year in view.years {
            lines.append("\(year.yearsAgoLabel) · \(year.weekLabel)")
            // A name with a line break in it (players send what they like)
            // stays on its line: it cannot forge one of the email's lines.
            for row in year.rows { lines.append("  \(row.rank). \(Self.oneLine(row.artist)) – \(Self.oneLine(row.name)) (\(row.playsLabel))") }
            if let more = year.moreText { lines.append("  … \(more)") }
            lines.append("  " + year.url)
            if let play = year.playURL { lines.append("  Play it again: " + play) }
            lines.append("")
        }
        lines.append(view.scheduleSentence)
        lines.append("Change it: " + view.settingsURL)
        lines.append("Unsubscribe: " + view.unsubscribeURL)
        return Self.crlfFree(lines.joined(separator: "\n")) + "\n"
    }

    /// "Sent every Monday at 08:00 (Europe/Berlin), 3 years back."
    static func scheduleSentence(_ subscription: DigestSubscription, timeZone: TimeZone) -> String {
        let years = subscription.years == 1 ? "one year back" : "\(subscription.years) years back"
        return "Sent every \(weekdayName(subscription.weekday)) at \(hourLabel(subscription.hour)) (\(timeZone.identifier)), \(years)."
    }

    static func weekdayName(_ weekday: Int) -> String {
        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        return names[(max(1, min(7, weekday)) - 1)]
    }

    static func hourLabel(_ hour: Int) -> String { String(format: "%02d:00", hour) }

    /// "a year ago", "3 years ago".
    static func ago(_ years: Int) -> String { years == 1 ? "a year ago" : "\(years) years ago" }

    static func capitalised(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    /// `text` with every line break and control character made a space.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .lineSeparator
                || $0.properties.generalCategory == .paragraphSeparator ? " " : $0
        }))
    }

    /// Text with any carriage return taken out (the mail layer writes line ends).
    static func crlfFree(_ text: String) -> String { text.replacingOccurrences(of: "\r", with: "") }
}
