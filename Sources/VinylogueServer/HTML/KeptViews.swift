import Artwork
import Stores
import VinylogueCore

/// Everything this instance keeps of people's listening, made from their
/// listens and shown again without asking the archive: pages and JSON
/// answers and cards in memory (`RenderedPages`), and drawn cards and
/// widgets on disk (`ShareCardStore`). The one place that forgets them: a
/// write of listens, a change of who may see a person, a fleet notice and
/// a deletion all come here, so no route or worker drops a kept view itself.
struct KeptViews: Sendable {
    /// Pages and JSON answers kept whole in memory.
    let pages: RenderedPages
    /// Share cards and widgets kept whole in memory.
    let cards: RenderedPages
    /// Cards and widgets drawn to disk (none in tests without a data directory).
    let drawn: ShareCardStore?
    /// The fleet's other instances, told when a change made here must be
    /// forgotten there too (nil on a single server).
    var notices: (any FleetNotices)? = nil

    /// What `person`'s pages show changed (their listens, who may see
    /// them): what was kept of them in memory is dropped. Drawn cards stay
    /// on disk: a card's file is named by what it shows, so a changed page
    /// draws a new one and the old is never served for it.
    func forget(_ person: Username) {
        pages.removePages(of: person)
        cards.removePages(of: person)
    }

    /// `person`'s listening changed by a change made here outside a
    /// listen write (what a copy stored deleted): forgotten here and, through
    /// the fleet's notices, on every instance. (A listen write announces its
    /// own notice in its transaction.)
    func listeningChanged(of person: Username) async {
        forget(person)
        await notices?.announce(.listensChanged(user: person.value))
    }

    /// `person` is gone (their account deleted): everything kept of them,
    /// their drawn cards' files included.
    func erase(_ person: Username) async {
        forget(person)
        await drawn?.forget(person)
    }

    /// Anything kept may be out of date (fleet notices were missed).
    func forgetEveryone() {
        pages.removeAll()
        cards.removeAll()
    }
}
