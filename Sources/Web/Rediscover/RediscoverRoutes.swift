import HTTPServing
import Sync
import Stores
import Foundation
import Hummingbird
import VinylogueCore

/// `/u/{user}/rediscover`: albums the user played heavily around this time
/// of year in earlier years and not at all in the last twelve months
/// (`Rediscoveries`), each with its best week and a link to it.
struct RediscoverRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let pages: PageRenderer
    let clock: WallClock

    /// What `rediscover.mustache` reads for one album.
    struct Find {
        let artist: String
        let name: String
        let playsLabel: String
        let whenLabel: String
        let bestLabel: String
        let weekURL: String
        let albumURL: String
        let artURL: String
    }

    /// What `rediscover.mustache` reads.
    struct View {
        var layout: LayoutFields
        let user: String
        let chartURL: String
        let rule: String
        let finds: [Find]
        let emptyText: String?
        let errorText: String?
        /// Instead of the finds while a copy of the history runs: when
        /// they will be ready.
        var copyNote: String?
        /// The finds to play again, from the archive (`PlaylistRoutes`).
        var playURL: String?

        init(user: Username, found: Rediscoveries?, failure: SourceError?, labels: WeekLabels) {
            layout = LayoutFields(title: "\(user.value) · rediscover", csrf: "")
            self.user = user.value
            chartURL = Paths.chart(user)
            rule = "Albums \(user.value) played at least \(Rediscoveries.minimumPlays) times within \(Rediscoveries.windowWeeks) weeks of this week "
                + "in an earlier year, and not once in the last 12 months."
            finds = (found?.finds ?? []).map { find in
                let day = labels.permalinkDay(of: find.bestWeek)
                return Find(artist: find.artist, name: find.name, playsLabel: WeekLabels.plays(find.plays),
                            whenLabel: WeekLabels.yearsAgo(find.yearsAgo),
                            bestLabel: "\(WeekLabels.plays(find.bestWeekPlays)) in \(labels.label(for: find.bestWeek))",
                            weekURL: Paths.week(user, day: day),
                            albumURL: Paths.album(user, artist: find.artist, name: find.name, day: day),
                            artURL: Paths.cover(user, artist: find.artist, name: find.name, mbid: find.mbid))
            }
            emptyText = found.map {
                $0.finds.isEmpty ? ($0.yearsSearched == 0
                    ? "\(user.value)’s history does not reach back a year yet: come back when it does."
                    : "Nothing forgotten: everything \(user.value) loved around this time of year, they have played in the last 12 months.") : nil
            } ?? nil
            errorText = failure?.forVisitors
        }
    }

    /// `people` is the group of `/u/{user}`.
    func register(people: RouterGroup<Context>) {
        people.get("rediscover") { request, context in try await self.page(request, context) }
    }

    func page(_ request: Request, _ context: Context) async throws -> Response {
        let person = try context.requiredPerson(), user = person.name
        let settings = await viewers.settings(for: context)
        let sources = self.sources.concealing(person.concealment)
        let chosen = await sources.chosenCharts(for: user), now = clock.now
        // Years of weekly charts from Last.fm (about 127 requests) for one
        // page, while the archive is about to hold them all: said instead.
        if chosen.origin == .lastfm, let copy = chosen.copy, copy.isUnfinished {
            var view = View(user: user, found: nil, failure: nil, labels: WeekLabels(timeZone: settings.timeZone))
            view.copyNote = CopyProgressNote.waitNote(copy, user: user, secondsLeft: sources.copies?.secondsLeft(copy),
                                                      what: "Rediscover looks through every year of \(user.value)’s listening: it")
            return pages.response("rediscover", view)
        }
        var found: Rediscoveries?
        var failure: SourceError?
        do {
            found = try await Rediscoveries.load(user: user, now: now, timeZone: settings.timeZone, charts: chosen.source)
        } catch {
            failure = error
        }
        var view = View(user: user, found: found, failure: failure, labels: WeekLabels(timeZone: settings.timeZone))
        if chosen.origin == .archive, found?.finds.isEmpty == false { view.playURL = Paths.playlistPage(user, .rediscover) }
        return pages.response("rediscover", view, status: HTTPResponse.Status(failure: failure))
    }
}
