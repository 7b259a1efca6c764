import Artwork
import Foundation
import VinylogueCore

/// The Open Graph / Twitter card fields and the Share button of one page:
/// its permalink and its card image, both absolute (social sites and chat
/// apps fetch them from elsewhere), built from the server's public address,
/// never from a request's Host header. `layout.mustache` writes them as
/// `<meta>` tags; every value is HTML-escaped there like any other.
struct ShareLinks: Sendable {
    /// The page's permalink: what the Share button shares (and links to
    /// without JavaScript).
    let pageURL: String
    /// The page's 1200 × 630 PNG card.
    let imageURL: String
    let title: String
    let description: String
    /// The card's text alternative.
    let imageAlt: String
    let imageWidth = ShareCard.width
    let imageHeight = ShareCard.height

    /// - Parameters:
    ///   - base: the public address, without a trailing slash.
    ///   - permalink: the page's own path (and query), which never drifts:
    ///     a dated week rather than "N years ago".
    init(base: String, permalink: String, title: String, description: String) {
        pageURL = base + permalink
        imageURL = base + Paths.card(of: permalink)
        self.title = title
        self.description = description
        imageAlt = "\(title): \(description)"
    }
}
