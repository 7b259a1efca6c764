import Artwork
import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// A person's "this week, N years ago" for their own site or sidebar:
///
/// - `/u/{user}/widget.png`: a 300 × 400 PNG (`WidgetCard`, drawn as the
///   share cards are);
/// - `/u/{user}/widget.svg`: the same in real type (`WidgetSVG`), covers
///   embedded as `data:` URIs, under a policy that allows no script;
/// - `/u/{user}/widget`: a small page for an `<iframe>`, the one address
///   any site may frame (`frame-ancestors *`); its links open the chart
///   page on this server in a new tab.
///
/// Each takes `?years_ago=N` (and the rest of the chart page's query) and
/// loads the chart page's presenter with the viewer's filter and time zone
/// (`ChartRoutes.asked`, `ChartRoutes.load`), so it shows what the page
/// shows. Failures are answered as the share cards answer them: the page's
/// status (404 for an unknown, private or hidden person) with a widget
/// saying what happened; an empty week is a widget saying so, with 200.
/// Complete answers are kept in memory by what was asked (the pictures
/// with the cards, the page with the pages, where the kept-page shortcut
/// finds it), so a received listen makes them forgotten.
struct WidgetRoutes: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    /// The chart page's reading of a request and its loading.
    let chartPages: ChartRoutes
    let covers: CoverRoutes
    let shareCards: ShareCardStore
    /// The widget page, and the shortcut's note of its address.
    let rendered: RenderedPages
    /// The pictures, kept as the share cards are.
    let renderedCards: RenderedPages
    let pages: PageRenderer
    let address: PublicAddress

    /// `people` is the group of `/u/{user}`.
    func register(people: RouterGroup<Context>) {
        people.get("widget.png") { request, context in try await self.png(request, context) }
        people.get("widget.svg") { request, context in try await self.svg(request, context) }
        people.get("widget") { request, context in try await self.page(request, context) }
    }

    /// What any widget request asks, its settings and its key among the
    /// kept answers of its `form`.
    private func asked(_ request: Request, _ context: Context, form: String) async throws -> (ChartRoutes.Asked, Settings, String) {
        let settings = await viewers.settings(for: context)
        let asked = try chartPages.asked(request, context, day: nil, settings: settings)
        return (asked, settings, "widget|\(form)|" + ChartRoutes.renderedKey(asked, settings: settings))
    }

    /// The presenter's page as the widget shows it, and whether a saved
    /// copy stood in for part of it.
    private func content(_ asked: ChartRoutes.Asked, settings: Settings) async -> (WidgetContent, failure: SourceError?, stale: Bool) {
        let (page, savedCopies, _) = await chartPages.load(asked)
        let content = WidgetContent(page, byDate: asked.byDate, labels: WeekLabels(timeZone: settings.timeZone), base: address.base)
        return (content, page.failure, !savedCopies.failures.isEmpty)
    }

    /// The `/art/` address of each row's cover, nil for a row without one.
    private func coverAddresses(_ content: WidgetContent, concealing concealment: Concealment) async -> [ArtworkAddress?] {
        let albums = content.albums
        var found = await covers.addresses(user: content.user, albums: albums.compactMap { $0 }, concealing: concealment).makeIterator()
        return albums.map { $0 == nil ? nil : found.next() ?? nil }
    }

    func png(_ request: Request, _ context: Context) async throws -> Response {
        let (asked, settings, key) = try await asked(request, context, form: "png")
        let renderedCards = self.renderedCards.unlessConcealing(asked.concealment)
        if let warm = renderedCards?.page(key) { return ShareCardRoutes.png(warm.body, status: warm.status) }
        let (content, failure, stale) = await content(asked, settings: settings)
        let card = content.card(covers: await coverAddresses(content, concealing: asked.concealment))
        return await ShareCardRoutes.answer(card, of: content.user, failure: failure, stale: stale, key: key, drawnBy: shareCards,
                                            keptIn: renderedCards)
    }

    func svg(_ request: Request, _ context: Context) async throws -> Response {
        let (asked, settings, key) = try await asked(request, context, form: "svg")
        let renderedCards = self.renderedCards.unlessConcealing(asked.concealment)
        if let warm = renderedCards?.page(key) { return Self.svg(warm.body, status: warm.status) }
        let (content, failure, stale) = await content(asked, settings: settings)
        let thumbnails = await shareCards.thumbnails(of: await coverAddresses(content, concealing: asked.concealment), side: WidgetSVG.thumbnailSide)
        let body = ByteBuffer(string: WidgetSVG.document(content, covers: thumbnails))
        let status = HTTPResponse.Status(failure: failure)
        // As a card: kept only when complete, every cover it names drawn.
        let complete = zip(content.albums, thumbnails).allSatisfy { $0 == nil || $1 != nil }
        if status == .ok, !stale, complete, let renderedCards { renderedCards.keep(key, status: status, body: body, contentType: Self.svgType) }
        return Self.svg(body, status: status)
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let (asked, settings, key) = try await asked(request, context, form: "page")
        let user = asked.request.user, route = context.endpointPath ?? ""
        let rendered = self.rendered.unlessConcealing(asked.concealment)
        if let rendered, let kept = rendered.response(key, to: request) {
            rendered.remember(request.uri.description, settings: settings.fingerprint, as: key, user: user, route: route, showsNowPlaying: false)
            return kept
        }
        let (content, failure, stale) = await content(asked, settings: settings)
        let html = ByteBuffer(string: pages.html("widget", WidgetPageView(content)))
        let status = HTTPResponse.Status(failure: failure)
        var response = WholeAnswer.response(status: status, body: html, contentType: RenderedPages.html)
        response.headers.append(contentsOf: Self.framable)
        if status == .ok, !stale, let rendered {
            rendered.keep(key, status: status, body: html, etag: response.headers[.eTag], own: Self.framable)
            rendered.remember(request.uri.description, settings: settings.fingerprint, as: key, user: user, route: route, showsNowPlaying: false)
        }
        return response
    }

    static let svgType = "image/svg+xml"

    /// The SVG's own policy: nothing loads but its `data:` covers, nothing
    /// runs (and, opened on its own, it is a sandboxed document).
    static let svgPolicy = "default-src 'none'; img-src data:; style-src 'none'; script-src 'none'; object-src 'none'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"

    static func svg(_ body: ByteBuffer, status: HTTPResponse.Status) -> Response {
        // It follows the clock and the covers, as a card does.
        Response(status: status, headers: [.contentType: svgType, .contentSecurityPolicy: svgPolicy,
                                           .cacheControl: ShareCardRoutes.cacheControl(status)],
                 body: .init(byteBuffer: body))
    }

    /// The widget page's own policy: the site's, but any page may frame it
    /// and it runs no script (so it gets no `X-Frame-Options: DENY`).
    static let pagePolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; object-src 'none'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors *"

    static let framable: HTTPFields = [.contentSecurityPolicy: pagePolicy]
}

/// What `widget.mustache` reads: the page for a frame, with no layout
/// around it.
struct WidgetPageView {
    struct Row {
        let name: String
        let artist: String?
        let plays: String
        /// The cover, on album rows (through `/u/{user}/cover/…`, this
        /// server's own address, as on the chart page).
        let artURL: String?
    }

    let title: String
    let stylesheet: String
    let user: String
    let highlight: String
    let week: String
    let chartURL: String
    let rows: [Row]
    let hasRows: Bool
    let note: String

    init(_ content: WidgetContent) {
        title = "\(content.user.value) · \(content.highlight)"
        stylesheet = Paths.asset("widget.css")
        user = content.user.value
        highlight = content.highlight
        week = content.week
        chartURL = content.chartURL
        rows = content.rows.map { row in
            Row(name: row.name, artist: row.artist, plays: row.plays,
                artURL: row.album.map { Paths.cover(content.user, artist: $0.artist, name: $0.name, mbid: $0.mbid) })
        }
        hasRows = !rows.isEmpty
        note = content.note
    }
}
