import Foundation
import HTTPServing
import Hummingbird
import LastFM
import ListenIngest
import Stores
import Sync
import VinylogueCore

/// `/u/{user}`, `/u/{user}?years_ago=N`, `/u/{user}/week/{YYYY-MM-DD}` and
/// the JSON mirror `/api/u/{user}/chart`.
struct ChartRoutes: Sendable {
    typealias Context = WebRequestContext

    let sources: ListeningSources
    let viewers: Viewers
    let pages: PageRenderer
    let rendered: RenderedPages
    let nowPlaying: NowPlaying
    let background: BackgroundWork
    let clock: WallClock
    /// The public address, for the share links' absolute URLs.
    let address: PublicAddress

    /// `people` is the group of `/u/{user}`, `api` of `/api/u/{user}`.
    func register(people: RouterGroup<Context>, api: RouterGroup<Context>) {
        people.get { request, context in try await self.page(request, context, day: nil) }
        people.get("week/:day") { request, context in
            // Path parameters arrive percent-encoded; the date is read (and echoed) decoded.
            let raw = context.parameters.get("day") ?? ""
            return try await self.page(request, context, day: raw.removingPercentEncoding ?? raw)
        }
        api.get("chart") { request, context in try await self.json(request, context) }
    }

    /// What a chart request asks for, read from the path and query.
    struct Asked {
        let request: WeeklyChartPage.Request
        let byDate: Bool
        /// The kind and the filter the address asked for, which the page's
        /// links keep.
        let options: ChartQuery
        /// Whom the answer conceals (the person, from a viewer who may not see them).
        let concealment: Concealment
    }

    func asked(_ request: Request, _ context: Context, day: String?, settings: Settings) throws -> Asked {
        let person = try context.requiredPerson(), user = person.name
        let query = request.uri.queryParameters
        let zone = settings.timeZone
        var selection = WeekSelection.yearsAgo(1)
        var byDate = false
        if let day = day ?? query.get("week") {
            // A calendar only for a date to read: a kept page asked by
            // years ago needs none.
            guard let date = WeekLabels(timeZone: zone).parseDay(day) else {
                let shown = day.count > 40 ? day.prefix(39) + "…" : day[...]
                throw PageError.badRequest("“\(shown)” is not a date. Use the form YYYY-MM-DD, for example 2020-07-08.")
            }
            selection = .containing(date)
            byDate = true
        } else if let n = query.get("years_ago") {
            guard let years = Int(n), (1...100).contains(years) else {
                throw PageError.badRequest("years_ago must be a whole number of years from 1 to 100.")
            }
            selection = .yearsAgo(years)
        }
        let kind = try RouteParameters.kind(query)
        var filter = settings.filter
        var minPlays: Int?
        if let min = query.get("min_plays") {
            guard let value = Int(min), (0...100_000).contains(value) else {
                throw PageError.badRequest("min_plays must be a whole number from 0 to 100000.")
            }
            filter = PlayCountFilter(threshold: value)
            minPlays = value
        }
        return Asked(request: .init(user: user, kind: kind, selection: selection, filter: filter, timeZone: zone), byDate: byDate,
                     options: ChartQuery(kind: kind, minPlays: minPlays), concealment: person.concealment)
    }

    /// Loads the page, noting any saved copies used, with the person's
    /// history copy as it stands.
    func load(_ asked: Asked) async -> (WeeklyChartPage, SavedCopies, ListeningSources.ChosenCharts) {
        let sources = self.sources.concealing(asked.concealment), now = clock.now
        let ((page, chosen), savedCopies) = await SavedCopies.noted { await sources.chartPage(asked.request, now: now) }
        let source = chosen.source
        // Warm Last.fm's cached answers for the year before, so moving there
        // is instant. The archive and the demo answer any week at once: for
        // them it would be a second chart per request, for nothing.
        if chosen.origin == .lastfm, let week = page.previous?.week, page.previous?.isEnabled == true {
            let request = asked.request
            // Not bound by this page's deadline: the work is for the next
            // page, and waited for (`BackgroundWork.idle`) until Last.fm answers.
            _ = await background.start {
                await AnswerDeadline.$current.withValue(nil) { _ = try? await source.chart(for: request.user, kind: request.kind, week: week) }
            }
        }
        return (page, savedCopies, chosen)
    }

    /// The anniversaries of `week` when it is "this week, N years ago" for
    /// an N that makes one (1, 5, 10…): one read of that week's albums and
    /// their first and last weeks. None on any other week, and none when
    /// the read fails (the page stands without them).
    static func moments(of user: Username, week: ChartWeek, now: Date, labels: WeekLabels, archive: any ArchiveReading) async -> [HistoryRoutes.Moment] {
        let finder = ChartWeekFinder(timeZone: labels.calendar.timeZone)
        let guess = Int(((now.timeIntervalSince1970 - Double(week.from)) / (365.2425 * 86_400)).rounded())
        let matching = [guess - 1, guess, guess + 1].first { n in
            n >= 1 && LastFMWeekCalendar.week(containing: Int64(finder.target(yearsAgo: n, from: now).timeIntervalSince1970.rounded(.down))) == week
        }
        guard let n = matching, Anniversaries.isAnniversary(n),
              let charted = try? await archive.albumsCharted(of: user, lifeOf: [week], around: [], inAtLeast: Anniversaries.ritualYears) else { return [] }
        let found = Anniversaries.build(user: user, now: now, timeZone: labels.calendar.timeZone, weeks: [(n, week)], charted: charted)
        return found.milestones.map {
            HistoryRoutes.Moment(text: Anniversaries.sentence($0), url: Paths.album(user, artist: $0.artist, name: $0.name, day: labels.permalinkDay(of: week)))
        }
    }

    func page(_ request: Request, _ context: Context, day: String?) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let asked = try asked(request, context, day: day, settings: settings)
        let sources = self.sources.concealing(asked.concealment), rendered = self.rendered.unlessConcealing(asked.concealment)
        // Keyed by what was asked, not by the raw URL: unique junk in a
        // query string must not grow the cache (only complete pages, which
        // never show the URL they were asked by, are kept).
        let key = Self.renderedKey(asked, settings: settings)
        // A page that says what is playing now is made fresh each time and
        // never kept: it is out of date when the track ends.
        let playing = nowPlaying.track(of: asked.request.user, concealing: asked.concealment)
        if playing == nil, let rendered, let kept = rendered.response(key, to: request) {
            rendered.remember(request.uri.description, settings: settings.fingerprint, as: key, user: asked.request.user,
                              route: context.endpointPath ?? "", showsNowPlaying: true)
            return kept
        }
        let (page, savedCopies, chosen) = await load(asked)
        let copy = chosen.copy
        let labels = WeekLabels(timeZone: settings.timeZone)
        var view = ChartPageView(page, byDate: asked.byDate, options: asked.options, selfURL: request.uri.description, labels: labels)
        view.staleNote = savedCopies.note
        // A year is counted from the archive alone.
        if chosen.origin != .archive { view.yearURL = nil }
        if sources.isDemo(asked.request.user) { view.profileURL = nil }
        view.nowPlaying = playing.map(Self.nowPlayingSentence)
        // Said with figures while the copy runs: such a page is not kept,
        // so each reload shows how far it has come.
        view.copyNote = CopyProgressNote.chartNote(copy, user: asked.request.user, secondsLeft: copy.flatMap { sources.copies?.secondsLeft($0) },
                                                   fromLastFM: chosen.origin == .lastfm)
        view.layout.share = ShareCardContent.links(page, byDate: asked.byDate, labels: labels, base: address.base)
        if page.kind == .album, page.failure == nil {
            view.widget = WidgetSnippets(user: asked.request.user, yearsAgo: asked.byDate ? 1 : page.yearsAgo, base: address.base)
            if chosen.origin == .archive, !asked.byDate, !page.rows.isEmpty {
                view.playXSPF = Paths.playlist(asked.request.user, yearsAgo: page.yearsAgo, .xspf)
                view.playJSPF = Paths.playlist(asked.request.user, yearsAgo: page.yearsAgo, .jspf)
                view.playPage = Paths.playlistPage(asked.request.user, yearsAgo: page.yearsAgo)
            }
            if chosen.origin == .archive, let week = page.week, let archive = sources.archive {
                view.moments = await Self.moments(of: asked.request.user, week: week, now: clock.now, labels: labels, archive: archive)
                view.hasMoments = !view.moments.isEmpty
            }
        }
        let status = HTTPResponse.Status(failure: page.failure)
        let html = ByteBuffer(string: pages.html("chart", view))
        let response = WholeAnswer.response(status: status, body: html, contentType: RenderedPages.html)
        if status == .ok && savedCopies.failures.isEmpty && playing == nil && view.copyNote == nil, let rendered {
            rendered.keep(key, status: status, body: html, etag: response.headers[.eTag])
            rendered.remember(request.uri.description, settings: settings.fingerprint, as: key, user: asked.request.user,
                              route: context.endpointPath ?? "", showsNowPlaying: true)
        }
        return response
    }

    /// "Now playing: “Track” by Artist, from Album".
    static func nowPlayingSentence(_ track: NowPlaying.Track) -> String {
        "Now playing: “\(track.track)” by \(track.artist)" + (track.album.isEmpty ? "" : ", from \(track.album)")
    }

    static func renderedKey(_ asked: Asked, settings: Settings) -> String {
        let r = asked.request
        let selection = switch r.selection {
        case .yearsAgo(let n): "y\(n)"
        case .containing(let date): "d\(Int64(date.timeIntervalSince1970))"
        }
        // The kind and whether the filter came from the address both change
        // the page (its rows, and the links that keep them).
        let filter = asked.options.minPlays.map { "m\($0)" } ?? "s\(r.filter.threshold)"
        return "chart|\(r.user.value)|\(selection)|\(r.kind.rawValue)|\(filter)|\(asked.byDate)|\(settings.fingerprint)"
    }

    func json(_ request: Request, _ context: Context) async throws -> Response {
        let settings = await viewers.settings(for: context)
        let asked: Asked
        do {
            asked = try self.asked(request, context, day: nil, settings: settings)
        } catch let error as PageError {
            return APIResponse.error(status: .badRequest, message: error.message)
        }
        // Kept as the page is, under the page's key (so with the same
        // freshness): a warm answer costs a dictionary lookup.
        let key = "api|" + Self.renderedKey(asked, settings: settings)
        let rendered = self.rendered.unlessConcealing(asked.concealment)
        if let rendered, let kept = rendered.response(key, to: request) {
            rendered.remember(request.uri.description, settings: settings.fingerprint, as: key, user: asked.request.user,
                              route: context.endpointPath ?? "", showsNowPlaying: false)
            return kept
        }
        let (page, savedCopies, _) = await load(asked)
        switch page.state {
        case .failed(let error):
            return APIResponse.error(status: HTTPResponse.Status(for: error), message: error.forVisitors)
        case .noChart(let message):
            return APIResponse.error(status: .notFound, message: message)
        case .chart, .empty:
            return APIResponse.kept(ChartJSONView(page).data(), key: key, complete: savedCopies.failures.isEmpty, in: rendered)
        }
    }
}

/// A request the server refuses with a sentence.
enum PageError: Error {
    case badRequest(String)

    var message: String {
        switch self { case .badRequest(let m): m }
    }
}

/// JSON responses of the `/api/` routes.
enum APIResponse {
    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        WholeAnswer.response(status: status, body: ByteBuffer(bytes: data), contentType: RenderedPages.json)
    }

    /// A successful answer, kept in `rendered` under `key` when it is
    /// `complete` (no saved copy stood in for a part of it) and there is
    /// a `rendered` (none for a request that conceals someone).
    static func kept(_ data: Data, key: String, complete: Bool, in rendered: RenderedPages?) -> Response {
        let body = ByteBuffer(bytes: data)
        let response = WholeAnswer.response(status: .ok, body: body, contentType: RenderedPages.json)
        if complete, let rendered { rendered.keep(key, status: .ok, body: body, contentType: RenderedPages.json, etag: response.headers[.eTag]) }
        return response
    }

    /// `{"error": "..."}`: the one shape of a JSON failure.
    struct Failure: Encodable {
        let error: String
    }

    static func error(status: HTTPResponse.Status, message: String) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(Failure(error: message))) ?? Data(#"{"error":"Vinylogue could not describe the problem."}"#.utf8)
        return json(data, status: status)
    }
}
