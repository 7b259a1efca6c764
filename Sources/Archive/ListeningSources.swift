import VinylogueCore

/// The one rule for where a person's listening comes from, used by the web
/// app and the command line alike: the local archive for anyone with
/// scrobbles in it, the built-in demo for `demo` when the demo is on, and
/// Last.fm for everyone else. The command line's `--source` pins one.
public struct ListeningSources: Sendable {
    /// Where a user's charts are read from.
    public enum Source: String, Sendable, CaseIterable {
        case archive, demo, lastfm
    }

    /// The local archive, when there is one.
    public let archive: (any ScrobbleArchive)?
    /// The built-in demo, when it is on.
    public let demo: DemoChartSource?
    /// Last.fm (any source that speaks for it: the cached client, or a fake).
    public let lastFM: any ChartSource & UserSource & AlbumSource

    public init(archive: (any ScrobbleArchive)?, demo: DemoChartSource?, lastFM: any ChartSource & UserSource & AlbumSource) {
        self.archive = archive
        self.demo = demo
        self.lastFM = lastFM
    }

    /// Whether `user` is the demo user and the demo is on.
    public func isDemo(_ user: Username) -> Bool { demo != nil && user == DemoHistory.username }

    /// Which source answers `user`'s charts: `pinned` when given, else the
    /// archive when it holds at least one of their scrobbles (an empty user
    /// row must not hide their Last.fm charts), else the demo or Last.fm.
    public func source(for user: Username, pinned: Source? = nil) async -> Source {
        if let pinned { return pinned }
        if let archive, (try? await archive.storedName(of: user)) ?? nil != nil { return .archive }
        return isDemo(user) ? .demo : .lastfm
    }

    /// The source of `user`'s charts, by `source(for:pinned:)`.
    public func charts(for user: Username, pinned: Source? = nil) async -> any ChartSource {
        switch await source(for: user, pinned: pinned) {
        case .archive:
            if let archive { return ArchiveChartSource(store: archive) }
            return UnavailableChartSource(error: .notArchived(user: user.value))
        case .demo: return demo ?? UnavailableChartSource(error: .notFound(what: "The built-in demo"))
        case .lastfm: return lastFM
        }
    }

    /// Whose profile answers for `user`: the demo's for the demo user,
    /// Last.fm's for everyone (an archive holds scrobbles, not profiles).
    public func profiles(for user: Username) -> any UserSource {
        if isDemo(user), let demo { return demo }
        return lastFM
    }

    /// Album details for `user`'s pages: the demo's catalogue for the demo
    /// user, Last.fm for everyone else.
    public func albums(for user: Username) -> any AlbumSource {
        if isDemo(user), let demo { return demo }
        return lastFM
    }
}

/// A chart source that could not be opened: every question gets the same
/// failure, which the presenter shows as a sentence and a next step.
public struct UnavailableChartSource: ChartSource {
    public let error: SourceError

    public init(error: SourceError) { self.error = error }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList { throw error }
    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart { throw error }
}
