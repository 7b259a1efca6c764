import Archive
import Foundation
import Hummingbird
import VinylogueCore

/// `/u/{user}/history`: this same week in every earlier year, top albums of
/// each, on one page. One query for archived users; for others, one cached
/// chart per year from Last.fm.
struct HistoryRoutes: Sendable {
    typealias Context = BasicRequestContext
    let dependencies: ServerDependencies
    static var perYear: Int { 5 }

    struct YearView {
        let yearsAgoLabel: String
        let weekLabel: String
        let url: String
        let rows: [ChartPageView.Row]
        let more: String?
    }

    struct View {
        var layout: LayoutFields
        let user: String
        let chartURL: String
        let years: [YearView]
        let hasYears: Bool
        var errorText: String?
    }

    func register(on router: Router<Context>) {
        router.get("/u/:user/history") { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        guard let raw = context.parameters.get("user"), let user = Username(validating: raw) else {
            throw PageError.badRequest("That is not a Last.fm username.")
        }
        let settings = await dependencies.settings.current()
        let labels = WeekLabels(timeZone: settings.timeZone)
        let now = dependencies.clock.now
        var years: [(n: Int, week: ChartWeek, entries: [ChartEntry], total: Int)] = []
        var failure: SourceError?
        do {
            if let archived = await dependencies.archived(user) {
                let every = try await archived.everyYear(for: user, kind: .album, limit: 200, now: now, timeZone: settings.timeZone)
                years = every.years.map { ($0.yearsAgo, $0.week, $0.entries, $0.totalEntries) }
            } else {
                let source = await dependencies.charts(for: user)
                let list = try await source.chartList(for: user)
                let finder = ChartWeekFinder(timeZone: settings.timeZone)
                for n in finder.yearsWithCharts(now: now, in: list) {
                    guard let week = list.week(containing: finder.target(yearsAgo: n, from: now)) else { continue }
                    let chart = try await source.chart(for: user, kind: .album, week: week)
                    if !chart.entries.isEmpty { years.append((n, week, chart.entries, chart.entries.count)) }
                }
            }
        } catch {
            failure = error
        }
        let yearViews = years.map { year -> YearView in
            let kept = settings.filter.apply(year.entries)
            let day = labels.isoDay(year.week.fromDate.addingTimeInterval(86400))
            let rows = kept.prefix(Self.perYear).map { e in
                ChartPageView.Row(artist: e.artist, name: e.name, playsLabel: WeekLabels.plays(e.plays),
                                  artURL: Paths.cover(user, artist: e.artist, name: e.name, mbid: e.mbid),
                                  albumURL: Paths.album(user, artist: e.artist, name: e.name, day: day))
            }
            let more = kept.count > rows.count ? "and \(kept.count - rows.count) more" : nil
            return YearView(yearsAgoLabel: WeekLabels.yearsAgo(year.n), weekLabel: labels.label(for: year.week),
                            url: Paths.week(user, day: day), rows: rows, more: more)
        }.filter { !$0.rows.isEmpty }
        var view = View(layout: LayoutFields(title: "\(user.value) · every year", csrf: ""), user: user.value,
                        chartURL: Paths.chart(user), years: yearViews, hasYears: !yearViews.isEmpty)
        view.errorText = failure.map(\.forVisitors)
        let status: HTTPResponse.Status = failure.map {
            switch $0 {
            case .notFound: .notFound
            case .stillWaiting: .serviceUnavailable
            default: .badGateway
            }
        } ?? .ok
        return dependencies.pages.response("history", view, status: status)
    }
}
