import Archive
import Foundation
import Hummingbird
import VinylogueCore

/// `/everyone?years_ago=N`: this week N years ago for everyone on the
/// viewer's list (the household's, or the signed-in account's), side by
/// side (`EveryoneThisWeekPage`). The charts are loaded a few at a time, all
/// within the request's one deadline for Last.fm.
///
/// Not kept in `RenderedPages`: the page is made of the viewer's own list,
/// while each person's chart underneath is cached as usual (Last.fm's
/// answers, or the archive).
struct EveryoneRoutes: Sendable {
    typealias Context = BasicRequestContext
    let dependencies: ServerDependencies

    /// Charts loaded at the same time, at most: enough to hide Last.fm's
    /// latency, few enough to stay well inside its rate limit.
    static let concurrentLoads = 6

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.everyonePath)) { request, _ in try await self.page(request) }
    }

    func page(_ request: Request) async throws -> Response {
        var yearsAgo = 1
        if let n = request.uri.queryParameters.get("years_ago") {
            guard let years = Int(n), (1...EveryoneThisWeekPage.maxYearsAgo).contains(years) else {
                throw PageError.badRequest("years_ago must be a whole number of years from 1 to \(EveryoneThisWeekPage.maxYearsAgo).")
            }
            yearsAgo = years
        }
        let viewer = await dependencies.viewer(of: request)
        guard let owner = viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to see everyone on your list.")
        }
        let users = try await dependencies.lists.owned(by: owner).users().map(\.username)
        let settings = await dependencies.settings.current(for: owner)
        let asked = EveryoneThisWeekPage.Request(users: users, yearsAgo: yearsAgo, filter: settings.filter, timeZone: settings.timeZone,
                                                 concurrentLoads: Self.concurrentLoads)
        let dependencies = self.dependencies, now = dependencies.clock.now
        let (page, savedCopies) = await SavedCopies.noted {
            await EveryoneThisWeekPage.load(asked, sources: { await dependencies.charts(for: $0) }, now: now)
        }
        var view = EveryonePageView(page, labels: WeekLabels(timeZone: settings.timeZone))
        view.staleNote = savedCopies.note
        return dependencies.pages.response("everyone", view)
    }
}
