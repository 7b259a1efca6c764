import HTTPServing
import Stores
import Sync
import Foundation
import Hummingbird
import VinylogueCore

/// `/everyone?years_ago=N`: this week N years ago for everyone on the
/// viewer's list (the household's, or the signed-in account's), side by
/// side (`EveryoneThisWeekPage`). The charts are loaded a few at a time, all
/// within the request's one deadline for Last.fm.
///
/// Kept in `RenderedPages` as the chart pages are (a minute, complete pages
/// only), under everything the page is made of: whose list it is, who is on
/// it in which order (read on every request, so a change to the list shows
/// at once), the years and the settings. A page on which someone's chart
/// failed for the moment is not kept; one on which it cannot be shown for
/// good (a private profile) is complete as it is.
struct EveryoneRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let lists: any ListStore
    let pages: PageRenderer
    let rendered: RenderedPages
    /// Who may see whom: a person hidden from the viewer is a card saying
    /// there is no such user, as for a name Last.fm does not know.
    let audiences: Audiences
    let clock: WallClock

    /// Charts loaded at the same time, at most: enough to hide Last.fm's
    /// latency, few enough to stay well inside its rate limit.
    static let concurrentLoads = 6

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.everyonePath)) { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        var yearsAgo = 1
        if let n = request.uri.queryParameters.get("years_ago") {
            guard let years = Int(n), (1...EveryoneThisWeekPage.maxYearsAgo).contains(years) else {
                throw PageError.badRequest("years_ago must be a whole number of years from 1 to \(EveryoneThisWeekPage.maxYearsAgo).")
            }
            yearsAgo = years
        }
        let viewer = await context.viewer
        guard let owner = viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to see everyone on your list.")
        }
        let users = try await lists.owned(by: owner).users().map(\.username)
        let concealment = Concealment(people: await audiences.concealed(users, from: viewer))
        return try await page(request, owner: owner, users: users, yearsAgo: yearsAgo, concealing: concealment)
    }

    /// The page of `owner`'s list, on which the people `concealment` names
    /// are names Last.fm does not know.
    func page(_ request: Request, owner: ListOwner, users: [Username], yearsAgo: Int, concealing concealment: Concealment) async throws -> Response {
        let settings = await viewers.settings.current(for: owner)
        let key = Self.renderedKey(owner: owner, users: users, yearsAgo: yearsAgo, settings: settings)
        let rendered = self.rendered.unlessConcealing(concealment)
        if let kept = rendered?.response(key, to: request) { return kept }
        let asked = EveryoneThisWeekPage.Request(users: users, yearsAgo: yearsAgo, filter: settings.filter, timeZone: settings.timeZone,
                                                 concurrentLoads: Self.concurrentLoads)
        let sources = self.sources.concealing(concealment), now = clock.now
        let (page, savedCopies) = await SavedCopies.noted {
            await EveryoneThisWeekPage.load(asked, sources: { await sources.charts(for: $0) }, now: now)
        }
        var view = EveryonePageView(page, labels: WeekLabels(timeZone: settings.timeZone))
        view.staleNote = savedCopies.note
        let html = ByteBuffer(string: pages.html("everyone", view))
        let response = WholeAnswer.response(status: .ok, body: html, contentType: RenderedPages.html)
        if savedCopies.failures.isEmpty && !page.people.contains(where: { $0.failure?.isTemporary == true }), let rendered {
            rendered.keep(key, status: .ok, body: html, etag: response.headers[.eTag])
        }
        return response
    }

    /// The page's key in `RenderedPages`: the owner (a page is never served
    /// from another's list), the people in the list's order, the years and
    /// the settings. Never the raw URL.
    static func renderedKey(owner: ListOwner, users: [Username], yearsAgo: Int, settings: Settings) -> String {
        "everyone|\(owner.id)|\(yearsAgo)|\(settings.fingerprint)|" + users.map(\.value).joined(separator: ",")
    }
}
