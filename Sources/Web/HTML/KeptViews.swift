import Artwork
import Stores
import VinylogueCore

/// Everything this instance keeps of people's listening, made from their
/// listens and shown again without asking the archive: pages and JSON
/// answers and cards in memory (`RenderedPages`), and drawn cards and
/// widgets on disk (`ShareCardStore`). It follows the one stream of
/// changes (`ListeningChanges`): a write of listens, an import, a copy, a
/// change of who may see a person, a deletion and the fleet's notices all
/// reach it there, so no route or worker drops a kept view itself.
struct KeptViews: ListeningFollower {
    /// Pages and JSON answers kept whole in memory.
    let pages: RenderedPages
    /// Share cards and widgets kept whole in memory.
    let cards: RenderedPages
    /// Cards and widgets drawn to disk (none in tests without a data directory).
    let drawn: ShareCardStore?

    /// What was kept in memory of the person `change` is about (of
    /// everyone, for `anything`) is dropped. Drawn cards stay on disk
    /// unless the person is gone: a card's file is named by what it shows,
    /// so a changed page draws a new one and the old is never served for it.
    func forget(_ change: ListeningChange) {
        guard let person = change.person else {
            pages.removeAll()
            cards.removeAll()
            return
        }
        pages.removePages(of: person)
        cards.removePages(of: person)
    }

    /// A person who is gone (their account deleted) leaves no drawn card behind.
    func tidy(after change: ListeningChange) async {
        if case .erased(let person) = change { await drawn?.forget(person) }
    }
}
