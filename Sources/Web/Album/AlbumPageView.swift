import HTTPServing
import Foundation
import VinylogueCore

/// What `album.mustache` reads for one album as one user heard it.
struct AlbumPageView {
    struct Run {
        var text: String? = nil
        var em: String? = nil
        var strong: String? = nil
        var href: String? = nil
        var label: String? = nil
    }

    struct Paragraph { let runs: [Run] }

    var layout: LayoutFields

    let user: String
    let artist: String
    let name: String
    let artURL: String
    let backURL: String
    let weekLabel: String
    let weekPlays: String?
    let userPlays: String?
    let listeners: String?
    let totalPlays: String?
    let paragraphs: [Paragraph]
    let hasSummary: Bool
    let tags: [String]
    let hasTags: Bool
    let lastFMURL: String?
    /// Why the page has no album details (the page's failure).
    var errorText: String?
    /// Why an archived album's page has no description or tags from
    /// Last.fm, when that is all that is missing.
    var detailsNote: String?
    var staleNote: String?
    /// Why the week's play count is missing, when a reload may bring it.
    let weekPlaysNote: String?
    /// The album's life in the user's archive, when they have one.
    var life: AlbumLifeView?
    /// Why the album's life is missing, when the archive failed.
    var lifeNote: String?
    /// "Also played as", for the person whose album it is.
    var choices: AlbumChoicesView?

    init(_ page: AlbumPage, backURL: String, artURL: String, csrf: String) {
        let detail = page.detail
        layout = LayoutFields(title: "\(page.name) · \(page.artist)", csrf: csrf, bodyClass: "album-theme")
        user = page.user.value
        artist = page.artist
        name = page.name
        self.artURL = artURL
        self.backURL = backURL
        weekLabel = page.weekLabel
        weekPlays = page.weekPlays.map(WeekLabels.plays)
        errorText = page.failure.map { "Album details are unavailable: \($0.forVisitors)" }
        weekPlaysNote = page.weekPlaysFailure.map { "That week’s plays are missing: \($0.forVisitors)" }
        userPlays = detail?.userPlayCount.map(Self.playsGrouped)
        listeners = detail.flatMap { $0.listeners > 0 ? Self.grouped($0.listeners) : nil }
        totalPlays = detail.flatMap { $0.playCount > 0 ? Self.grouped($0.playCount) : nil }
        paragraphs = (detail?.summary?.paragraphs ?? []).map { runs in
            Paragraph(runs: runs.map { run in
                switch run {
                case .text(let t): Run(text: t)
                case .emphasis(let t): Run(em: t)
                case .strong(let t): Run(strong: t)
                case .link(let t, let href): Run(href: href, label: t)
                }
            })
        }
        hasSummary = !paragraphs.isEmpty
        tags = Array((detail?.tags ?? []).prefix(6))
        hasTags = !tags.isEmpty
        // Only ever link to an http(s) address.
        lastFMURL = detail?.url.flatMap { $0.lowercased().hasPrefix("https://") || $0.lowercased().hasPrefix("http://") ? $0 : nil }
    }

    /// The sentence for an archived album whose details Last.fm could not
    /// give for the moment: what is missing, why, and what to do.
    static func detailsNote(_ failure: SourceError) -> String {
        "This album’s description and tags from Last.fm cannot be loaded right now; the rest of this page comes from the archive. "
            + failure.forVisitors
    }

    /// All-time counts run into thousands: "14,657 plays" (and "1 play").
    static func playsGrouped(_ n: Int) -> String { n == 1 ? "1 play" : "\(grouped(n)) plays" }

    /// 511055 → "511,055"
    static func grouped(_ n: Int) -> String { VinylogueCore.grouped(n) }
}
