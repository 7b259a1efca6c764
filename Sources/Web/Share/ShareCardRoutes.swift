import Artwork
import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `…/card.png` under each shareable page: the 1200 × 630 PNG its Open
/// Graph and Twitter tags point at.
///
/// - `/u/{user}/card.png` (`?years_ago=N`), `/u/{user}/week/{day}/card.png`:
///   the chart's top covers;
/// - `/u/{user}/history/card.png`: the top album of each earlier year;
/// - `/u/{user}/album/{artist}/{album}/card.png`: the album's cover;
/// - `/u/{user}/year/{YYYY}/card.png`: the year's top covers, its plays,
///   its #1 album and what was found.
///
/// A card loads the same presenter as its page, with the same query, so
/// it shows what the page shows. Its covers are named only through
/// `CoverRoutes.address` (the album's details, or the demo's catalogue)
/// and fetched only by `ArtworkStore`: nothing in a card request can make
/// the server fetch another URL.
///
/// When the page has nothing to show (an empty week, no chart that year),
/// the card still says so in the house palette, with status 200: that is
/// the page's truth, and it is what a link preview should show. When the
/// page failed (Last.fm down, an unknown or private user), the card answers
/// the page's own status (`HTTPResponse.Status(failure:)`: 404, 502, 503)
/// so a crawler does not keep it, with a card saying what happened as the
/// body, so an `<img>` still shows something readable; such cards are kept
/// neither on disk nor in memory.
struct ShareCardRoutes: Sendable {
    typealias Context = WebRequestContext

    let sources: ListeningSources
    let viewers: Viewers
    /// The chart page's reading of a request and its loading.
    let chartPages: ChartRoutes
    /// The year page's, the same.
    let yearPages: YearRoutes
    let covers: CoverRoutes
    let shareCards: ShareCardStore
    /// Complete cards by what was asked (as `RenderedPages` keeps pages), so
    /// a warm card costs a dictionary lookup, like a warm page. Shared with
    /// the listen APIs, so received listens can make a user's cards forgotten.
    let kept: RenderedPages
    let clock: WallClock
    let address: PublicAddress

    /// `people` is the group of `/u/{user}`.
    func register(people: RouterGroup<Context>) {
        people.get("card.png") { request, context in try await self.chart(request, context, day: nil) }
        people.get("week/:day/card.png") { request, context in
            let raw = context.parameters.get("day") ?? ""
            return try await self.chart(request, context, day: raw.removingPercentEncoding ?? raw)
        }
        people.get("history/card.png") { request, context in try await self.history(request, context) }
        people.get("album/:artist/:album/card.png") { request, context in try await self.album(request, context) }
        people.get("year/:year/card.png") { request, context in try await self.year(request, context) }
    }

    func year(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        let year = try YearRoutes.year(context)
        let settings = await viewers.settings(for: context)
        let concealment = context.concealment
        let key = "card|" + YearRoutes.renderedKey(user, year: year, settings: settings), kept = self.kept.unlessConcealing(concealment)
        if let warm = kept?.page(key) { return Self.png(warm.body, status: warm.status) }
        // A card is for anyone: it speaks of the person as others see them.
        switch await yearPages.load(user, year: year, settings: settings, concealment: concealment, viewer: nil) {
        case .review(let review):
            let tops = review.topAlbums.prefix(9)
            let covers = await addresses(user: user, albums: tops.map { ($0.artist, $0.name, $0.mbid) }, concealing: concealment)
            return await answer(ShareCardContent.card(review, covers: covers), of: user, failure: nil, stale: false, key: key, keptIn: kept)
        case .note(let note), .offer(let note):
            return await answer(ShareCardContent.card(user: user, year: year, note: note), of: user, failure: nil, stale: true, key: nil, keptIn: nil)
        case .failure(let failure):
            return await answer(ShareCardContent.card(user: user, year: year, note: failure.message), of: user, failure: failure, stale: false,
                                key: nil, keptIn: nil)
        }
    }

    func chart(_ request: Request, _ context: Context, day: String?) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let charts = chartPages
        let asked = try charts.asked(request, context, day: day, settings: settings)
        let key = "card|" + ChartRoutes.renderedKey(asked, settings: settings), kept = self.kept.unlessConcealing(asked.concealment)
        if let warm = kept?.page(key) { return Self.png(warm.body, status: warm.status) }
        let (page, savedCopies, _) = await charts.load(asked)
        let user = asked.request.user
        let rows = page.kind == .album ? Array(page.rows.prefix(9)) : []
        let covers = await addresses(user: user, albums: rows.map { ($0.artist, $0.name, $0.entry.mbid) }, concealing: asked.concealment)
        let card = ShareCardContent.card(page, covers: covers, labels: WeekLabels(timeZone: settings.timeZone), now: clock.now)
        return await answer(card, of: user, failure: page.failure, stale: !savedCopies.failures.isEmpty, key: key, keptIn: kept)
    }

    func history(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let asked = try HistoryRoutes.asked(request, context, settings: settings)
        let user = asked.user, concealment = context.concealment
        let key = "card|" + HistoryRoutes.renderedKey(asked, settings: settings), kept = self.kept.unlessConcealing(concealment)
        if let warm = kept?.page(key) { return Self.png(warm.body, status: warm.status) }
        let source = await sources.concealing(concealment).charts(for: user), now = clock.now
        let (page, savedCopies) = await SavedCopies.noted { await EveryYearPage.load(asked, from: source, now: now) }
        let tops = ShareCardContent.topAlbums(page).prefix(9)
        let covers = await addresses(user: user, albums: tops.map { ($0.artist, $0.name, $0.entry.mbid) }, concealing: concealment)
        let card = ShareCardContent.card(page, covers: covers, labels: WeekLabels(timeZone: settings.timeZone))
        return await answer(card, of: user, failure: page.failure, stale: !savedCopies.failures.isEmpty, key: key, keptIn: kept)
    }

    func album(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let labels = WeekLabels(timeZone: settings.timeZone)
        let asked = try RouteParameters.album(request, context, timeZone: settings.timeZone)
        let (user, artist, name, mbid) = (asked.user, asked.artist, asked.name, asked.mbid)
        let concealment = context.concealment, sources = self.sources.concealing(concealment)
        let albums = sources.albums(for: user), charts = await sources.charts(for: user)
        let (loaded, savedCopies) = await SavedCopies.noted { await AlbumPage.load(asked, albums: albums, charts: charts) }
        var page = loaded, failure = page.failure
        if case .missing = page.state { failure = .notFound(what: "That album") }
        // An archived album's card draws nothing of Last.fm's details (the
        // names, the week, its plays, the cover), so, as its page does, it
        // stands when Last.fm fails for the moment.
        if let error = page.failure, error.isTemporary, let history = charts as? any AlbumHistorySource,
           let weeks = try? await history.albumWeeks(of: user, artist: artist, album: name), !weeks.isEmpty {
            page = AlbumPage.build(asked, state: .loaded, detail: nil, week: page.week, weekPlays: page.weekPlays)
            failure = nil
        }
        let cover = await addresses(user: user, albums: [(artist, name, mbid)], concealing: concealment).first
        // Not kept in memory by request: the album page itself is not either.
        return await answer(ShareCardContent.card(page, cover: cover, labels: labels), of: user, failure: failure,
                            stale: !savedCopies.failures.isEmpty, key: nil, keptIn: nil)
    }

    /// The `/art/` addresses of the given albums' covers, in order; albums
    /// without one are left out.
    func addresses(user: Username, albums: [(artist: String, name: String, mbid: String?)], concealing concealment: Concealment) async -> [ArtworkAddress] {
        await covers.addresses(user: user, albums: albums, concealing: concealment).compactMap { $0 }
    }

    /// Draws (or reads) the card and answers with the page's status.
    private func answer(_ card: ShareCard, of person: Username, failure: SourceError?, stale: Bool, key: String?,
                        keptIn kept: RenderedPages?) async -> Response {
        await Self.answer(card, of: person, failure: failure, stale: stale, key: key, drawnBy: shareCards, keptIn: kept)
    }

    /// Draws (or reads) `card` of `person`'s page with `store` and answers
    /// with the page's status; a complete card of a page that did not fail,
    /// drawn without a saved copy standing in, is kept in `kept` under `key`
    /// (when there is a `kept`: none for a request that conceals someone).
    static func answer(_ card: some DrawnCard, of person: Username, failure: SourceError?, stale: Bool, key: String?,
                       drawnBy store: ShareCardStore, keptIn kept: RenderedPages?) async -> Response {
        let status = HTTPResponse.Status(failure: failure)
        let drawn: DrawnShareCard
        do {
            drawn = try await store.png(for: card, of: person, keep: failure == nil)
        } catch {
            return Response(status: .serviceUnavailable, headers: [.cacheControl: "no-store"])
        }
        let body = ByteBuffer(bytes: drawn.bytes)
        if let key, let kept, status == .ok, drawn.isComplete, !stale { kept.keep(key, status: status, body: body) }
        return png(body, status: status)
    }

    static func png(_ body: ByteBuffer, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "image/png", .cacheControl: cacheControl(status)], body: .init(byteBuffer: body))
    }

    /// How long a browser or proxy may show a card (or widget) of a person
    /// whose listening everyone sees without asking again: a minute. A card
    /// follows the clock ("3 years ago") and the covers, and the person may
    /// choose "Only me" at any moment, after which no cache should go on
    /// showing it for long (a restricted person's are `private, no-cache`,
    /// `PersonMiddleware`). Served again from memory, a minute costs
    /// little. Failures are not kept at all.
    static func cacheControl(_ status: HTTPResponse.Status) -> String {
        status == .ok ? "public, max-age=60" : "no-store"
    }
}
