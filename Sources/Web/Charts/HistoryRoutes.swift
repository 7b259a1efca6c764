import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/history`: this same week in every earlier year, top albums of
/// each, on one page (`EveryYearPage`). One query for archived users; for
/// others, one cached chart per year from Last.fm. Complete pages and JSON
/// answers are kept in `RenderedPages`, as the chart's are.
struct HistoryRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let pages: PageRenderer
    let rendered: RenderedPages
    let clock: WallClock
    /// The public address, for the share links' absolute URLs.
    let address: PublicAddress

    /// What `history.mustache` reads for one year.
    struct YearView {
        let yearsAgo: Int
        let yearsAgoLabel: String
        let weekLabel: String
        let url: String
        /// The week's year, and its year in review.
        let year: Int
        var yearURL: String?
        /// The week to play again (`PlaylistRoutes`), for an archived person's albums.
        var playURL: String?
        /// Albums first or last played exactly that many years ago this week.
        var moments: [Moment] = []
        var hasMoments = false
        let rows: [ChartPageView.Row]
        let more: String?
    }

    /// One anniversary or ritual, as a sentence with its album's page.
    struct Moment {
        let text: String
        let url: String
    }

    /// What `history.mustache` reads.
    struct View {
        var layout: LayoutFields
        let user: String
        let chartURL: String
        let kinds: [ChartPageView.KindLink]
        var years: [YearView]
        let emptyText: String?
        let errorText: String?
        let staleNote: String?
        /// Albums that come back around this week year after year.
        var rituals: [Moment] = []
        var ritualsHeading = ""
        var hasRituals = false

        /// Drops the links to each year's review (a person not archived here).
        mutating func withoutYearLinks() {
            for index in years.indices { (years[index].yearURL, years[index].playURL) = (nil, nil) }
        }

        /// Adds `found`'s rituals and each year's anniversaries (album charts only).
        mutating func note(_ found: Anniversaries, user: Username, labels: WeekLabels) {
            func url(_ artist: String, _ name: String, _ week: ChartWeek) -> String {
                Paths.album(user, artist: artist, name: name, day: labels.permalinkDay(of: week))
            }
            rituals = found.rituals.map { ritual in
                Moment(text: "\(ritual.name) by \(ritual.artist): \(Anniversaries.years(ritual))", url: url(ritual.artist, ritual.name, ritual.weeks.last!))
            }
            ritualsHeading = found.ritualsHeading(whose: CopyProgressNote.possessive(user))
            hasRituals = !rituals.isEmpty
            for index in years.indices {
                years[index].moments = found.milestones.filter { $0.yearsAgo == years[index].yearsAgo }.map {
                    Moment(text: Anniversaries.sentence($0), url: url($0.artist, $0.name, $0.week))
                }
                years[index].hasMoments = !years[index].moments.isEmpty
            }
        }

        init(_ page: EveryYearPage, savedCopies: SavedCopies, labels: WeekLabels) {
            let user = page.user
            let kind = page.kind, options = ChartQuery(kind: kind)
            layout = LayoutFields(title: "\(user.value) · every year" + (kind == .album ? "" : " · \(kind.plural)"), csrf: "")
            self.user = user.value
            chartURL = Paths.chart(user, options)
            kinds = ChartKind.allCases.map {
                ChartPageView.KindLink(label: $0.plural.capitalized, url: Paths.history(user, kind: $0), current: $0 == kind)
            }
            years = page.years.map { year in
                let day = labels.permalinkDay(of: year.week)
                let calendarYear = labels.year(of: year.week)
                return YearView(yearsAgo: year.yearsAgo, yearsAgoLabel: year.yearsAgoLabel, weekLabel: year.weekLabel, url: Paths.week(user, day: day, options),
                                year: calendarYear, yearURL: Paths.year(user, calendarYear),
                                playURL: kind == .album && !year.rows.isEmpty ? Paths.playlistPage(user, yearsAgo: year.yearsAgo) : nil,
                                rows: year.rows.map { ChartPageView.Row($0, kind: kind, of: user, day: day) }, more: year.moreText)
            }
            emptyText = page.emptyText
            errorText = page.failure?.forVisitors
            staleNote = savedCopies.note
        }
    }

    /// `people` is the group of `/u/{user}`, `api` of `/api/u/{user}`.
    func register(people: RouterGroup<Context>, api: RouterGroup<Context>) {
        people.get("history") { request, context in try await self.page(request, context) }
        api.get("history") { request, context in try await self.json(request, context) }
    }

    /// What the page, its card and its JSON ask for: the user, `?kind=`,
    /// and the viewer's filter and time zone.
    static func asked(_ request: Request, _ context: Context, settings: Settings) throws -> EveryYearPage.Request {
        EveryYearPage.Request(user: try context.requiredPerson().name, kind: try RouteParameters.kind(request), filter: settings.filter,
                              timeZone: settings.timeZone)
    }

    func load(_ asked: EveryYearPage.Request, concealing concealment: Concealment) async -> (EveryYearPage, SavedCopies) {
        let source = await sources.concealing(concealment).charts(for: asked.user), now = clock.now
        return await SavedCopies.noted { await EveryYearPage.load(asked, from: source, now: now) }
    }

    /// The person's anniversaries and rituals of this week, when their
    /// albums are charted from the archive (nil otherwise, or when it
    /// cannot be read: the page stands without them).
    func anniversaries(_ asked: EveryYearPage.Request, from source: any ChartSource) async -> Anniversaries? {
        guard asked.kind == .album, let archive = (source as? ArchiveChartSource)?.store else { return nil }
        return try? await archive.anniversaries(of: asked.user, now: clock.now, timeZone: asked.timeZone)
    }

    /// The key the page (and, prefixed, its JSON) is kept under in
    /// `RenderedPages`: what was asked and the settings it was made with.
    static func renderedKey(_ asked: EveryYearPage.Request, settings: Settings) -> String {
        "history|\(asked.user.value)|\(asked.kind.rawValue)|\(settings.fingerprint)"
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let asked = try Self.asked(request, context, settings: settings)
        let key = Self.renderedKey(asked, settings: settings)
        let rendered = self.rendered.unlessConcealing(context.concealment)
        if let kept = rendered?.response(key, to: request) { return kept }
        let source = await sources.concealing(context.concealment).charts(for: asked.user), now = clock.now
        async let anniversaries = anniversaries(asked, from: source)
        let (page, savedCopies) = await SavedCopies.noted { await EveryYearPage.load(asked, from: source, now: now) }
        let labels = WeekLabels(timeZone: settings.timeZone)
        var view = View(page, savedCopies: savedCopies, labels: labels)
        if let found = await anniversaries { view.note(found, user: asked.user, labels: labels) }
        // A year is counted from the archive alone.
        if !(source is ArchiveChartSource) { view.withoutYearLinks() }
        view.layout.share = ShareCardContent.links(page, base: address.base)
        let status = HTTPResponse.Status(failure: page.failure)
        let html = ByteBuffer(string: pages.html("history", view))
        let response = WholeAnswer.response(status: status, body: html, contentType: RenderedPages.html)
        if status == .ok && savedCopies.failures.isEmpty, let rendered {
            rendered.keep(key, status: status, body: html, etag: response.headers[.eTag])
        }
        return response
    }

    /// `/api/u/{user}/history`: the same as `vinylogue history --json`.
    func json(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let asked: EveryYearPage.Request
        do {
            asked = try Self.asked(request, context, settings: settings)
        } catch let error as PageError {
            return APIResponse.error(status: .badRequest, message: error.message)
        }
        let key = "api|" + Self.renderedKey(asked, settings: settings)
        let rendered = self.rendered.unlessConcealing(context.concealment)
        if let kept = rendered?.response(key, to: request) { return kept }
        let (page, savedCopies) = await load(asked, concealing: context.concealment)
        if let failure = page.failure {
            return APIResponse.error(status: HTTPResponse.Status(for: failure), message: failure.forVisitors)
        }
        return APIResponse.kept(EveryYearJSONView(page, timeZone: settings.timeZone).data(), key: key,
                                complete: savedCopies.failures.isEmpty, in: rendered)
    }
}
