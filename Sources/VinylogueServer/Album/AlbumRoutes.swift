import Artwork
import Foundation
import Hummingbird
import LastFM
import VinylogueCore

/// `/u/{user}/album/{artist}/{album}?week=YYYY-MM-DD`: one album, as the user
/// heard it that week, coloured by its art.
struct AlbumRoutes: Sendable {
    typealias Context = BasicRequestContext

    let dependencies: ServerDependencies

    func register(on router: Router<Context>) {
        router.get("/u/:user/album/:artist/:album") { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        guard let rawUser = context.parameters.get("user"), let user = Username(validating: rawUser),
              let artist = context.parameters.get("artist")?.removingPercentEncoding, !artist.isEmpty,
              let name = context.parameters.get("album")?.removingPercentEncoding, !name.isEmpty else {
            throw PageError.badRequest("That album address is not complete: it needs a user, an artist and an album.")
        }
        let settings = await dependencies.settings.current()
        let labels = WeekLabels(timeZone: settings.timeZone)
        let day = request.uri.queryParameters.get("week").flatMap(labels.parseDay)
        let mbid = request.uri.queryParameters.get("mbid").flatMap { $0.count == 36 ? $0 : nil }

        let stale = StaleResponses()
        let albums = dependencies.albums(for: user), charts = await dependencies.charts(for: user)
        var detail: AlbumDetail?
        var failure: SourceError?
        var weekPlays: Int?
        var weekLabel = "this week"
        var backURL = Paths.chart(user)
        await StaleResponses.$current.withValue(stale) {
            do {
                detail = try await albums.album(artist: artist, name: name, mbid: mbid, user: user)
            } catch let error as SourceError {
                failure = error
            } catch {
                failure = .transport(detail: String(describing: error))
            }
            if let day, let list = try? await charts.chartList(for: user), let week = list.week(containing: day) {
                weekLabel = labels.label(for: week)
                backURL = Paths.week(user, day: labels.isoDay(day))
                let chart = try? await charts.chart(for: user, kind: .album, week: week)
                weekPlays = chart?.entries.first {
                    $0.artist.lowercased() == artist.lowercased() && $0.name.lowercased() == name.lowercased()
                }?.plays
            }
        }
        if case .notFound? = failure {
            var page = MessagePage(title: "Album not found", heading: "Album not found", csrf: "",
                                   message: "Last.fm has no album called “\(name)” by \(artist).")
            page.linkURL = backURL
            page.linkLabel = "Back to the chart"
            return dependencies.pages.response("message", page, status: .notFound)
        }
        // The cover, and the page's colours taken from it (computed once per image).
        let covers = CoverRoutes(dependencies: dependencies)
        let address = await covers.address(user: user, artist: artist, name: name, mbid: mbid)
        let colours: AlbumColours? = if let address { await colours(for: address) } else { nil }
        var view = AlbumPageView(user: user, artist: artist, name: name, detail: detail, weekPlays: weekPlays, weekLabel: weekLabel,
                                 backURL: backURL, artURL: address?.localPath ?? "/static/placeholder.svg", csrf: "")
        view.layout.themeURL = colours.map(CoverRoutes.themePath)
        view.errorText = failure.map { "Album details are unavailable: \($0.forVisitors)" }
        view.staleNote = stale.failures.first.map { "Showing a saved copy: \($0.message)" }
        return dependencies.pages.response("album", view)
    }
}

extension AlbumRoutes {
    /// The palette of the art at `address`: from disk at once when known,
    /// else fetched, but the page waits at most `patience.albumColours` (the fetch goes on,
    /// and the next visit is coloured).
    func colours(for address: ArtworkAddress) async -> AlbumColours? {
        if let stored = await dependencies.artwork.storedColours(for: address) { return stored }
        let artwork = dependencies.artwork, patience = dependencies.patience.albumColours
        let fetch = await dependencies.background.start { try? await artwork.colours(for: address) }
        guard let fetched = await fetch.value(within: patience), let colours = fetched else { return nil }
        return colours
    }
}

/// A page with one heading, one sentence and one way on.
struct MessagePage {
    var layout: LayoutFields
    let heading: String
    let message: String
    var linkURL: String? = "/"
    var linkLabel: String? = "Go to your users"

    init(title: String, heading: String, csrf: String, message: String) {
        layout = LayoutFields(title: title, csrf: csrf)
        self.heading = heading
        self.message = message
    }
}
