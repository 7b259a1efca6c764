import Archive
import ServiceLifecycle
import VinylogueCore

/// In a fleet, drops the pages, cards and JSON answers this instance kept
/// of each person whose listens changed on any instance
/// (`ArchiveChangeNotices`), so a listen sent to one instance shows on the
/// next page any instance makes, not only once its kept page expires.
/// A service of the server, following the notices until it stops.
struct ChangedUserPages: Service {
    let notices: any ArchiveChangeNotices
    let rendered: RenderedPages
    let renderedCards: RenderedPages

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            await notices.follow { [rendered, renderedCards] user in
                rendered.removePages(of: user)
                renderedCards.removePages(of: user)
            }
        }
    }
}
