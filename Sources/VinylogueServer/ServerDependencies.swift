import Archive
import Foundation
import LastFM
import VinylogueCore

/// Everything the routes talk to, built once by the composition root.
public struct ServerDependencies: Sendable {
    public let clock: WallClock
    public let lastFM: LastFMClient
    /// The built-in demo, when the server runs with `--demo`.
    public let demo: DemoChartSource?
    public let lists: ListStore
    public let settings: CurrentSettings
    public let pages: PageRenderer
    let rendered: RenderedPages

    public init(clock: WallClock, lastFM: LastFMClient, demo: DemoChartSource?, lists: ListStore,
                settings: CurrentSettings, pages: PageRenderer) {
        self.settings = settings
        self.rendered = RenderedPages(clock: clock)
        self.clock = clock
        self.lastFM = lastFM
        self.demo = demo
        self.lists = lists
        self.pages = pages
    }

    var apiKeyConfigured: Bool { lastFM.configuration.apiKey != nil }

    func isDemo(_ user: Username) -> Bool { demo != nil && user == DemoHistory.username }

    /// Where `user`'s charts come from.
    func charts(for user: Username) -> any ChartSource {
        if isDemo(user), let demo { return demo }
        return lastFM
    }

    func profiles(for user: Username) -> any UserSource {
        if isDemo(user), let demo { return demo }
        return lastFM
    }

    func albums(for user: Username) -> any AlbumSource {
        if isDemo(user), let demo { return demo }
        return lastFM
    }
}
