import LastFM
import VinylogueCore

/// The saved copies a page was built from because Last.fm failed, and the
/// note the page shows about them ("Showing a saved copy: …").
struct SavedCopies: Sendable {
    /// The failures the saved copies stood in for; empty when every answer
    /// was fresh.
    let failures: [SourceError]

    /// The sentence for the page, when a saved copy was used.
    var note: String? { failures.first.map { "Showing a saved copy: \($0.message)" } }

    /// Runs `work` (a page's loading), collecting the saved copies it used.
    static func noted<Page>(_ work: () async -> Page) async -> (Page, SavedCopies) {
        let stale = StaleResponses()
        let page = await StaleResponses.$current.withValue(stale) { await work() }
        return (page, SavedCopies(failures: stale.failures))
    }
}
