import Foundation
import Synchronization
import Stores
import VinylogueCore

/// The one rule for where a person's listening comes from, used by the web
/// app and the command line alike: the local archive for anyone with
/// scrobbles in it, the built-in demo for its people (`DemoHousehold`) when
/// the demo is on, and Last.fm for everyone else. The command line's
/// `--source` pins one.
///
/// Without the demo its people's names are ordinary Last.fm names: a
/// generated copy of them an earlier demo left in the archive is not
/// theirs, and is not used.
///
/// In the web app, a person's history is copied into the archive
/// (`HistoryCopyWorker`): their first view starts the copy. A Last.fm
/// person is charted from Last.fm until a copy of their whole history has
/// finished once, so a copy under way never shows a chart with holes.
///
/// ListenBrainz users (`lb:name`) are charted only from the archive: their
/// listens are copied there by a sync (`vinylogue sync lb:NAME`, or, in the
/// web app, their copy on the first view), and until that has stored
/// something their charts say it is running (or why it failed).
/// Their profiles come from ListenBrainz; album details from Last.fm
/// without a user (so without their play count).
///
/// A person it conceals (`concealing(_:)`, for a web request whose viewer
/// may not see them) is answered for as a name Last.fm does not know:
/// nothing of theirs is read, copied or asked of Last.fm under their name.
public struct ListeningSources: Sendable {
    /// Where a user's charts are read from.
    public enum Source: String, Sendable, CaseIterable {
        case archive, demo, lastfm
    }

    /// The local archive, when there is one.
    public let archive: (any ArchiveReading)?
    /// The built-in demo, when it is on.
    public let demo: DemoChartSource?
    /// Last.fm (any source that speaks for it: the cached client, or a fake).
    public let lastFM: any ChartSource & UserSource & AlbumSource

    /// ListenBrainz's profiles, for `lb:` users (nil: they are not confirmed).
    public let listenBrainz: (any UserSource)?
    /// History copies started by people's pages (the web app's; nil on
    /// the command line, which runs `sync` itself).
    public let copies: (any HistoryCopyRequests)?
    /// Who is answered for as an unknown name (nobody, unless a web
    /// request's viewer may not see someone).
    public private(set) var concealment: Concealment = .nobody
    /// What "now" is, for whether an archive is up to date (the copies' clock).
    var clock: WallClock? { copies?.clock }
    /// An archive holding listens this recent is charted even while a
    /// first copy runs: it was filled otherwise (an import, a player).
    public static let recentEnough: TimeInterval = 30 * 86_400

    public init(archive: (any ArchiveReading)?, demo: DemoChartSource?, lastFM: any ChartSource & UserSource & AlbumSource,
                listenBrainz: (any UserSource)? = nil, copies: (any HistoryCopyRequests)? = nil) {
        self.archive = archive
        self.demo = demo
        self.lastFM = lastFM
        self.listenBrainz = listenBrainz
        self.copies = copies
    }

    /// The same sources, answering for the people `concealment` names as
    /// for names Last.fm does not know.
    public func concealing(_ concealment: Concealment) -> ListeningSources {
        guard concealment != self.concealment else { return self }
        var concealing = self
        concealing.concealment = concealment
        return concealing
    }

    /// Whether `user` is one of the demo's people and the demo is on.
    public func isDemo(_ user: Username) -> Bool { !concealment.conceals(user) && demo?.isMember(user) ?? false }

    /// The demo's spelling of `user`, when they are one of its people and the demo is on.
    public func demoName(of user: Username) -> Username? { demo?.memberName(of: user) }

    /// Which source answers `user`'s charts: `pinned` when given, else the
    /// archive when it holds at least one of their scrobbles (an empty user
    /// row must not hide their Last.fm charts), no first copy of their
    /// history is under way and, for the demo's people with the demo off,
    /// it is not the demo's generated copy; else the demo or Last.fm.
    public func source(for user: Username, pinned: Source? = nil) async -> Source {
        await chosenSource(for: user, pinned: pinned).source
    }

    /// The source, and the person's history copy as it stands (a view
    /// queues one when it is due, after the page is answered:
    /// `HistoryCopyWorker.viewed`).
    func chosenSource(for user: Username, pinned: Source?) async -> (source: Source, copy: HistoryCopy?) {
        if concealment.conceals(user) { return (.lastfm, nil) }
        // Nothing but the archive holds a ListenBrainz user's charts.
        if user.service == .listenBrainz { return (.archive, nil) }
        if let pinned { return (pinned, nil) }
        let chosen = await chosenFromArchive(for: user, kind: .album, choosing: { _ in nil })
        return (chosen.source, chosen.copy)
    }

    /// The source of a Last.fm user's charts and their copy, from one read
    /// of the archive (`ArchiveReading.chartReading`, which also reads the
    /// chart of the week `choose` picks, for a page that shows one).
    ///
    /// While a first copy runs, the archive may hold only its oldest pages
    /// (it walks from the oldest): Last.fm charts them, unless the archive
    /// already holds listens of the last 30 days, from an import or a
    /// player, which Last.fm may not have. One that failed or was stopped
    /// leaves what the archive holds to chart. An archive that cannot be
    /// read leaves the demo or Last.fm, and queues no copy.
    func chosenFromArchive(for user: Username, kind: ChartKind,
                           choosing choose: @escaping @Sendable (ClosedRange<Int64>) -> ChartWeek?) async
        -> (source: Source, copy: HistoryCopy?, reading: ChartReading?) {
        // The demo is never copied from anywhere.
        let isDemo = isDemo(user), withCopy = !isDemo && copies != nil
        guard let archive else { return (isDemo ? .demo : .lastfm, withCopy ? await copies?.viewed(user) : nil, nil) }
        guard let reading = try? await archive.chartReading(kind, of: user, withCopy: withCopy, choosing: choose) else {
            return (isDemo ? .demo : .lastfm, nil, nil)
        }
        let copy = withCopy ? await copies?.viewed(user, standing: reading.copy) : nil
        if let copy, copy.doneAt == nil, copy.isUnfinished, !isRecent(reading.span) { return (.lastfm, copy, reading) }
        if reading.storedName != nil {
            // Asked only for the demo's five names, and only with the demo off.
            if demo == nil, DemoHousehold.isMember(user), reading.generatedThrough != nil { return (.lastfm, copy, reading) }
            return (.archive, copy, reading)
        }
        return (isDemo ? .demo : .lastfm, copy, reading)
    }

    /// Whether `span` reaches into the last 30 days.
    func isRecent(_ span: ClosedRange<Int64>?) -> Bool {
        guard let span, let now = clock?.now else { return false }
        return Double(span.upperBound) >= now.timeIntervalSince1970 - Self.recentEnough
    }

    /// `user`'s weekly chart page for `request` at `now`, and where it came
    /// from. A cold page of an archived person costs one read of the
    /// archive (`chosenFromArchive`), which is the page when the archive is
    /// the source; another source is asked as `WeeklyChartPage.load` asks.
    public func chartPage(_ request: WeeklyChartPage.Request, now: Date) async -> (page: WeeklyChartPage, chosen: ChosenCharts) {
        let user = request.user
        guard archive != nil, !concealment.conceals(user), user.service == .lastFM else {
            let chosen = await chosenCharts(for: user)
            return (await WeeklyChartPage.load(request, from: chosen.source, now: now), chosen)
        }
        // The week list the read chose its week from, kept for the page:
        // made once (a few hundred weeks of calendar arithmetic).
        let chosenList = Mutex<(span: ClosedRange<Int64>, list: ChartWeekList)?>(nil)
        let (origin, copy, reading) = await chosenFromArchive(for: user, kind: request.kind) { span in
            let list = ArchiveChartSource.weeks(spanning: span)
            chosenList.withLock { $0 = (span, list) }
            return WeeklyChartPage.week(of: request, now: now, in: list)
        }
        let chosen = chosenCharts(origin, of: user, copy: copy)
        if origin == .archive, let span = reading?.span {
            let outcome: WeeklyChartPage.Outcome = reading?.chart.map { .chart($0) } ?? .noWeek
            let made = chosenList.withLock { $0 }
            let list = made.flatMap { $0.span == span ? $0.list : nil } ?? ArchiveChartSource.weeks(spanning: span)
            return (WeeklyChartPage.build(request, now: now, list: list, outcome: outcome), chosen)
        }
        return (await WeeklyChartPage.load(request, from: chosen.source, now: now), chosen)
    }

    /// The source of `user`'s charts, by `source(for:pinned:)`.
    public func charts(for user: Username, pinned: Source? = nil) async -> any ChartSource {
        await chosenCharts(for: user, pinned: pinned).source
    }

    /// A chart source, which of the three it is, and the person's history
    /// copy as it stands (for pages that say how far it has come).
    public struct ChosenCharts: Sendable {
        public let source: any ChartSource
        public let origin: Source
        public var copy: HistoryCopy? = nil
    }

    /// The source of `user`'s charts and which it is, so a caller can act
    /// on the choice (warm Last.fm's answers ahead) without asking again.
    public func chosenCharts(for user: Username, pinned: Source? = nil) async -> ChosenCharts {
        if concealment.conceals(user) { return ChosenCharts(source: UnavailableChartSource(error: .unknownUser(user)), origin: .lastfm) }
        if user.service == .listenBrainz { return await listenBrainzCharts(for: user) }
        let (origin, copy) = await chosenSource(for: user, pinned: pinned)
        return chosenCharts(origin, of: user, copy: copy)
    }

    /// The source of `user`'s charts that `origin` names, with `copy`.
    func chosenCharts(_ origin: Source, of user: Username, copy: HistoryCopy?) -> ChosenCharts {
        switch origin {
        case .archive:
            if let archive { return ChosenCharts(source: ArchiveChartSource(store: archive), origin: origin, copy: copy) }
            return ChosenCharts(source: UnavailableChartSource(error: .notArchived(user: user.value)), origin: origin)
        case .demo: return ChosenCharts(source: demo ?? UnavailableChartSource(error: .notFound(what: "The built-in demo")), origin: origin)
        case .lastfm:
            let choices = archive as? any AlbumChoices
            let folded = FoldedChartSource(charts: lastFM) { user in (try? await choices?.albumFolding(of: user)) ?? .editions }
            return ChosenCharts(source: folded, origin: origin, copy: copy)
        }
    }

    /// An `lb:` user's charts: the archive once it holds their listens
    /// (a sync is started when none ran lately, for what is new); until
    /// then, a source that says the copy is running, or why it failed.
    func listenBrainzCharts(for user: Username) async -> ChosenCharts {
        let copy = await copies?.viewed(user)
        if let archive, (try? await archive.storedName(of: user)) ?? nil != nil {
            return ChosenCharts(source: ArchiveChartSource(store: archive), origin: .archive, copy: copy)
        }
        let error: SourceError = switch copy?.state {
        case .queued?, .copying?: .listenBrainz(.copying(user: user.value))
        case .failed?: copies?.failure(of: user) ?? .copyFailed(user: user.value, reason: copy?.reason ?? "")
        default: .notArchived(user: user.value)
        }
        return ChosenCharts(source: UnavailableChartSource(error: error), origin: .archive, copy: copy)
    }

    /// Whose profile answers for `user`: the demo's for its people,
    /// ListenBrainz's for `lb:` users, Last.fm's for everyone else (an
    /// archive holds scrobbles, not profiles).
    public func profiles(for user: Username) -> any UserSource {
        if concealment.conceals(user) { return UnavailableUserSource(error: .unknownUser(user)) }
        if isDemo(user), let demo { return demo }
        if user.service == .listenBrainz {
            return listenBrainz ?? UnavailableUserSource(error: .notFound(what: "“\(user.value)”"))
        }
        return lastFM
    }

    /// Album details for `user`'s pages: the demo's catalogues for its
    /// people, Last.fm for everyone else (for `lb:` users without their name,
    /// which Last.fm does not know).
    public func albums(for user: Username) -> any AlbumSource {
        if concealment.conceals(user) { return AlbumsForNobody(albums: lastFM) }
        if isDemo(user), let demo { return demo }
        if user.service == .listenBrainz { return AlbumsForNobody(albums: lastFM) }
        return lastFM
    }
}

/// Album details without anyone's play count: for `lb:` users, whose name
/// means nothing to Last.fm.
struct AlbumsForNobody: AlbumSource {
    let albums: any AlbumSource

    func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
        try await albums.album(artist: artist, name: name, mbid: mbid, user: nil)
    }
}

/// A profile source that could not be set up: every question gets the same failure.
public struct UnavailableUserSource: UserSource {
    public let error: SourceError

    public init(error: SourceError) { self.error = error }

    public func user(_ user: Username) async throws(SourceError) -> User { throw error }
    public func friends(of user: Username) async throws(SourceError) -> [User] { throw error }
}

/// A chart source that could not be opened: every question gets the same
/// failure, which the presenter shows as a sentence and a next step.
public struct UnavailableChartSource: ChartSource {
    public let error: SourceError

    public init(error: SourceError) { self.error = error }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList { throw error }
    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart { throw error }
}
