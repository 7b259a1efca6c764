import Foundation
import Hummingbird
import VinylogueCore

/// `/u/{user}/history`: this same week in every earlier year, top albums of
/// each, on one page (`EveryYearPage`). One query for archived users; for
/// others, one cached chart per year from Last.fm.
struct HistoryRoutes: Sendable {
    typealias Context = BasicRequestContext
    let dependencies: ServerDependencies
    /// The public address, for the share links' absolute URLs.
    let address: PublicAddress

    /// What `history.mustache` reads for one year.
    struct YearView {
        let yearsAgoLabel: String
        let weekLabel: String
        let url: String
        let rows: [ChartPageView.Row]
        let more: String?
    }

    /// What `history.mustache` reads.
    struct View {
        var layout: LayoutFields
        let user: String
        let chartURL: String
        let years: [YearView]
        let emptyText: String?
        let errorText: String?
        let staleNote: String?

        init(_ page: EveryYearPage, savedCopies: SavedCopies, labels: WeekLabels) {
            let user = page.user
            layout = LayoutFields(title: "\(user.value) · every year", csrf: "")
            self.user = user.value
            chartURL = Paths.chart(user)
            years = page.years.map { year in
                let day = labels.permalinkDay(of: year.week)
                return YearView(yearsAgoLabel: year.yearsAgoLabel, weekLabel: year.weekLabel, url: Paths.week(user, day: day),
                                rows: year.rows.map { ChartPageView.Row(album: $0, of: user, day: day) }, more: year.moreText)
            }
            emptyText = page.emptyText
            errorText = page.failure?.forVisitors
            staleNote = savedCopies.note
        }
    }

    func register(on router: Router<Context>) {
        router.get("/u/:user/history") { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let user = try RouteParameters.user(context)
        let settings = await dependencies.settings(for: request)
        let asked = EveryYearPage.Request(user: user, filter: settings.filter, timeZone: settings.timeZone)
        let source = await dependencies.charts(for: user), now = dependencies.clock.now
        let (page, savedCopies) = await SavedCopies.noted { await EveryYearPage.load(asked, from: source, now: now) }
        var view = View(page, savedCopies: savedCopies, labels: WeekLabels(timeZone: settings.timeZone))
        view.layout.share = ShareCardContent.links(page, base: address.base)
        return dependencies.pages.response("history", view, status: HTTPResponse.Status(failure: page.failure))
    }
}
