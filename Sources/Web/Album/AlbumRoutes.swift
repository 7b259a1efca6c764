import Artwork
import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/album/{artist}/{album}?week=YYYY-MM-DD`: one album, as the user
/// heard it that week, coloured by its art. For an archived user the page
/// stands without Last.fm (cover remembered, life from the archive), saying
/// that the album's description and tags cannot be loaded for the moment.
struct AlbumRoutes: Sendable {
    typealias Context = WebRequestContext

    let sources: ListeningSources
    let viewers: Viewers
    let pages: PageRenderer
    let artwork: ArtworkStore
    let covers: CoverRoutes
    let background: BackgroundWork
    /// How long a page waits for its cover's colours before it is sent without them.
    let albumColourPatience: Duration
    let clock: WallClock
    /// The public address, for the share links' absolute URLs.
    let address: PublicAddress
    /// The person's own choices about the album ("Also played as"), when
    /// the archive keeps them.
    var choices: AlbumChoiceRoutes?

    /// `people` is the group of `/u/{user}`.
    func register(people: RouterGroup<Context>) {
        people.get("album/:artist/:album") { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let labels = WeekLabels(timeZone: settings.timeZone)
        let asked = try RouteParameters.album(request, context, timeZone: settings.timeZone)
        let (user, artist, name, mbid, day) = (asked.user, asked.artist, asked.name, asked.mbid, asked.day)
        let concealment = context.concealment, sources = self.sources.concealing(concealment)
        let albums = sources.albums(for: user), chosen = await sources.chosenCharts(for: user), charts = chosen.source
        let (page, savedCopies) = await SavedCopies.noted { await AlbumPage.load(asked, albums: albums, charts: charts) }
        let backURL = if let day, page.week != nil { Paths.week(user, day: labels.isoDay(day)) } else { Paths.chart(user) }
        if case .missing(let message) = page.state {
            var notFound = MessagePage(title: "Album not found", heading: "Album not found", csrf: "", message: message)
            notFound.linkURL = backURL
            notFound.linkLabel = "Back to the chart"
            return pages.response("message", notFound, status: .notFound)
        }
        // The cover, and the page's colours taken from it (computed once per image).
        let address = await covers.address(user: user, artist: artist, name: name, mbid: mbid, concealing: concealment)
        let colours: AlbumColours? = if let address { await colours(for: address) } else { nil }
        var view = AlbumPageView(page, backURL: backURL, artURL: address?.localPath ?? Paths.placeholderCover, csrf: "")
        view.layout.themeURL = colours.map(CoverRoutes.themePath)
        view.staleNote = savedCopies.note
        if let history = charts as? any AlbumHistorySource {
            do {
                view.life = try await AlbumLife.load(user: user, artist: artist, album: name, week: page.week, now: clock.now,
                                                     timeZone: settings.timeZone, history: history)
                    .map { AlbumLifeView($0, labels: labels) }
            } catch {
                view.lifeNote = "This album’s history in \(user.value)’s archive is missing: \(error.forVisitors)"
            }
        } else if chosen.origin == .lastfm, let copy = chosen.copy, copy.isUnfinished {
            view.lifeNote = CopyProgressNote.waitNote(copy, user: user, secondsLeft: sources.copies?.secondsLeft(copy),
                                                      what: "This album’s life in \(user.value)’s listening")
        }
        view.layout.share = ShareCardContent.links(page, labels: labels, base: self.address.base)
        var status = HTTPResponse.Status(failure: page.failure)
        if let failure = page.failure, failure.isTemporary, view.life != nil {
            // An archived album with Last.fm down or slow: its cover, its
            // week and its life are the archive's, so the page stands; only
            // Last.fm's description and tags are missing, and the page says
            // so. (Album pages are never kept in `RenderedPages`, so the
            // next visit after Last.fm is back is complete.)
            view.errorText = nil
            view.detailsNote = AlbumPageView.detailsNote(failure)
            status = .ok
        }
        if let choices {
            let csrf = CSRFProtection.token(for: request)
            view.choices = await choices.section(user: user, artist: artist, name: name, request: request, context: context, csrf: csrf.value)
            if view.choices != nil {
                var response = pages.response("album", view, status: status)
                response.attach(csrf: csrf)
                return response
            }
        }
        return pages.response("album", view, status: status)
    }
}

extension AlbumRoutes {
    /// The palette of the art at `address`: from disk at once when known,
    /// else fetched, but the page waits at most `patience.albumColours` (the fetch goes on,
    /// and the next visit is coloured).
    func colours(for address: ArtworkAddress) async -> AlbumColours? {
        if let stored = await artwork.storedColours(for: address) { return stored }
        let artwork = artwork, patience = albumColourPatience
        let fetch = await background.start { try? await artwork.colours(for: address) }
        guard let fetched = await fetch.value(within: patience), let colours = fetched else { return nil }
        return colours
    }
}

/// A page with one heading, one sentence and one way on.
struct MessagePage {
    var layout: LayoutFields
    let heading: String
    let message: String
    var linkURL: String? = Paths.home
    var linkLabel: String? = "Go to your users"

    init(title: String, heading: String, csrf: String, message: String) {
        layout = LayoutFields(title: title, csrf: csrf)
        self.heading = heading
        self.message = message
    }

    /// A page answering a Settings form, with a link back to its section
    /// (`#section`).
    static func settings(title: String, heading: String, message: String, section: String) -> MessagePage {
        var page = MessagePage(title: title, heading: heading, csrf: "", message: message)
        page.linkURL = Paths.settings + "#" + section
        page.linkLabel = "Back to Settings"
        return page
    }
}
