import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/year/{YYYY}`: a person's year in review (`YearInReview`),
/// counted from the archive in the viewer's time zone, and its JSON mirror
/// `/api/u/{user}/year/{YYYY}` (the same as `vinylogue year --json`).
/// Complete answers are kept in `RenderedPages` until the person's
/// listening changes. A person charted from Last.fm is told the page needs
/// their history copied, and how far the copy has come; the person
/// themself is offered the copy, a button away.
struct YearRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    /// Whose listening the viewer speaks for (to offer them their copy).
    let own: OwnListening
    let pages: PageRenderer
    let rendered: RenderedPages
    let clock: WallClock
    /// The public address, for the share links' absolute URLs.
    let address: PublicAddress

    /// `people` is the group of `/u/{user}`, `api` of `/api/u/{user}`.
    func register(people: RouterGroup<Context>, api: RouterGroup<Context>) {
        people.get("year/:year") { request, context in try await self.page(request, context) }
        api.get("year/:year") { request, context in try await self.json(request, context) }
    }

    /// The year the address asks for: four digits, 1000 to 9999.
    static func year(_ context: Context) throws -> Int {
        let given = context.parameters.get("year") ?? ""
        guard let year = ListeningYear.number(given) else {
            let raw = given.removingPercentEncoding ?? given
            let shown = raw.count > 12 ? raw.prefix(11) + "…" : raw[...]
            throw PageError.badRequest("“\(shown)” is not a year. Use four digits, as in /year/2019.")
        }
        return year
    }

    /// What a year's page can be made of.
    enum Outcome {
        case review(YearInReview)
        /// Not from the archive: why, in a sentence (a copy under way, or none).
        case note(String)
        /// The viewer's own history, not copied: why, and the copy to start.
        case offer(String)
        case failure(SourceError)
    }

    /// `viewer`: whose listening the viewer speaks for, if anyone's.
    func load(_ user: Username, year: Int, settings: Settings, concealment: Concealment, viewer: Username?) async -> Outcome {
        guard let calendarYear = ListeningYear(year, timeZone: settings.timeZone, now: clock.now) else { return .failure(.notFound(what: "The year \(year)")) }
        let sources = self.sources.concealing(concealment)
        let chosen = await sources.chosenCharts(for: user)
        if concealment.conceals(user) { return .failure(.unknownUser(user)) }
        guard chosen.origin == .archive, let archive = sources.archive else {
            // Someone Last.fm does not know is answered for as such, whatever a copy says.
            do throws(SourceError) { _ = try await sources.profiles(for: user).user(user) } catch { return .failure(error) }
            if let copy = chosen.copy, copy.isUnfinished {
                return .note(CopyProgressNote.waitNote(copy, user: user, secondsLeft: sources.copies?.secondsLeft(copy),
                                                       what: "A year’s page counts every listen of that year from the archive: \(user.value)’s"))
            }
            if case .demo = chosen.origin {
                return .note("A year’s page is counted from Vinylogue’s archive, and \(user.value)’s listening is not in it: the demo keeps only demo’s there.")
            }
            if viewer == user, sources.copies != nil {
                var said = "A year’s page is counted from Vinylogue’s own copy of your \(user.service.displayName) history, and it holds none yet."
                if let copy = chosen.copy, copy.state == .failed, let reason = copy.reason { said += " The last copy stopped: \(reason)" }
                return .offer(said)
            }
            return .note("A year’s page is counted from Vinylogue’s own copy of \(user.value)’s history, and it holds none yet. "
                + "Once \(user.value) signs in here, Vinylogue copies it.")
        }
        do throws(SourceError) {
            guard let review = try await archive.yearInReview(of: user, in: calendarYear) else {
                // A ListenBrainz person whose first copy has not stored anything yet.
                if let copy = chosen.copy, copy.isUnfinished {
                    return .note(CopyProgressNote.waitNote(copy, user: user, secondsLeft: sources.copies?.secondsLeft(copy),
                                                           what: "A year’s page counts every listen of that year from the archive: \(user.value)’s"))
                }
                // Why, as the person's charts say it (a ListenBrainz copy that failed, say).
                do throws(SourceError) { _ = try await chosen.source.chartList(for: user) } catch { return .failure(error) }
                return .failure(.notArchived(user: user.value))
            }
            return .review(review)
        } catch {
            return .failure(error)
        }
    }

    static func renderedKey(_ user: Username, year: Int, settings: Settings) -> String {
        "year|\(user.value)|\(year)|\(settings.fingerprint)"
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        let year = try Self.year(context)
        let settings = await viewers.settings(for: context)
        let key = Self.renderedKey(user, year: year, settings: settings)
        let rendered = self.rendered.unlessConcealing(context.concealment)
        if let kept = rendered?.response(key, to: request) { return kept }
        let view: YearPageView
        var status = HTTPResponse.Status.ok
        switch await load(user, year: year, settings: settings, concealment: context.concealment, viewer: await own.person(of: context)) {
        case .review(let review):
            var shown = YearPageView(review, filter: settings.filter, labels: WeekLabels(timeZone: settings.timeZone))
            shown.layout.share = ShareCardContent.links(review, base: address.base)
            view = shown
        case .note(let note): view = YearPageView(user: user, year: year, note: note, failure: nil)
        case .offer(let note):
            // A form of the viewer's own: never kept (it has a copy note).
            let csrf = CSRFProtection.token(for: request)
            var offered = YearPageView(user: user, year: year, note: note, failure: nil)
            offered.layout.csrf = csrf.value
            offered.copyOffer = .init(action: Paths.historyCopy, label: "Copy my \(user.service.displayName) history")
            var response = WholeAnswer.response(status: .ok, body: ByteBuffer(string: pages.html("year", offered)), contentType: RenderedPages.html)
            response.attach(csrf: csrf)
            return response
        case .failure(let failure):
            view = YearPageView(user: user, year: year, note: nil, failure: failure)
            status = HTTPResponse.Status(failure: failure)
        }
        let html = ByteBuffer(string: pages.html("year", view))
        let response = WholeAnswer.response(status: status, body: html, contentType: RenderedPages.html)
        if status == .ok, view.copyNote == nil, let rendered { rendered.keep(key, status: status, body: html, etag: response.headers[.eTag]) }
        return response
    }

    /// `/api/u/{user}/year/{YYYY}`.
    func json(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        let year: Int
        do {
            year = try Self.year(context)
        } catch let error as PageError {
            return APIResponse.error(status: .badRequest, message: error.message)
        }
        let settings = await viewers.settings(for: context)
        let key = "api|" + Self.renderedKey(user, year: year, settings: settings)
        let rendered = self.rendered.unlessConcealing(context.concealment)
        if let kept = rendered?.response(key, to: request) { return kept }
        switch await load(user, year: year, settings: settings, concealment: context.concealment, viewer: await own.person(of: context)) {
        case .review(let review): return APIResponse.kept(YearJSONView(review).data(), key: key, complete: true, in: rendered)
        case .note(let note): return APIResponse.error(status: .conflict, message: note)
        case .offer(let note): return APIResponse.error(status: .conflict, message: note + " Start the copy in Settings.")
        case .failure(let failure): return APIResponse.error(status: HTTPResponse.Status(for: failure), message: failure.forVisitors)
        }
    }
}
