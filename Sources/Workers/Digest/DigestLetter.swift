import Foundation
import Stores
import VinylogueCore

/// One email's words: a subject, a plain-text part, an HTML part (inline
/// styles, no scripts, tables for layout, as mail clients want), and the
/// covers the HTML shows, carried inside the email (`cid:` addresses): a
/// mail client shows them without fetching anything, and no address of the
/// person's pages is fetched by it.
package struct DigestLetter: Sendable, Equatable {
    /// A cover image carried in the email.
    package struct Cover: Sendable, Equatable {
        /// Its `Content-ID`, without angle brackets ("cover-3@vinylogue").
        package let contentID: String
        package let contentType: String
        package let bytes: Data

        package init(contentID: String, contentType: String, bytes: Data) {
            self.contentID = contentID
            self.contentType = contentType
            self.bytes = bytes
        }
    }

    package let subject: String
    package let text: String
    package let html: String
    package let covers: [Cover]

    package init(subject: String, text: String, html: String, covers: [Cover]) {
        self.subject = subject
        self.text = text
        self.html = html
        self.covers = covers
    }
}

/// What writes the digest's emails: the web app's `DigestWriter`, with
/// its templates and the addresses of the person's pages.
package protocol DigestLetters: Sendable {
    /// The digest of `user`'s `years` (the every-year page's, cut to the
    /// years asked for), or nil when there is none. `covers` has the cover
    /// of each album that has one, by artist and name; `moments` are this
    /// week's anniversaries and rituals, a sentence each; `playable`: the
    /// person's listening is archived, so each week has its page to play
    /// it again; `kept`: the years back of the weekly playlist their music
    /// server keeps, linked at the top.
    func digest(of user: Username, years: [EveryYearPage.Year], moments: [String], playable: Bool, kept: Int?, subscription: DigestSubscription,
                timeZone: TimeZone, covers: [AlbumKey: (contentType: String, bytes: Data)]) -> DigestLetter?
    /// The email that confirms an address: one link.
    func confirmation(of subscription: DigestSubscription, person: Username) -> DigestLetter
    /// The address that ends `token`'s subscription in one click.
    func unsubscribeAddress(token: String) -> String
}
