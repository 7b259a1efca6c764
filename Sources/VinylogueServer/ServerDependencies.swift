import Stores
import Sync
import Artwork
import Foundation
import Hummingbird
import LastFM
import VinylogueCore

/// Everything the routes talk to, built once by the composition root.
public struct ServerDependencies: Sendable {
    public let clock: WallClock
    public let lastFM: LastFMClient
    /// The built-in demo, when the server runs with `--demo`.
    public let demo: DemoChartSource?
    public let lists: any ListStore
    /// The local scrobble archive; users with scrobbles there are charted
    /// from it, offline.
    public let archive: (any ScrobbleArchive)?
    public let settings: CurrentSettings
    /// Sign-in with Last.fm, when the key's secret is configured; nil keeps
    /// one household list and no sign-in.
    let signIn: SignInSessions?
    /// The database personal data lives in, for `/healthz`: its kind and
    /// a check that answers whether it can be used now.
    public let database: DatabaseHealth
    /// Album art on disk, fetched only from Last.fm's image host.
    public let artwork: ArtworkStore
    /// The demo's generated covers.
    public let demoCovers: DemoCoverCatalogue
    /// Archived albums' covers, remembered (answers shared by a fleet), and
    /// resolved through `lastFM` when not yet known.
    public let albumCovers: AlbumCovers?
    /// Share cards (`…/card.png`), kept on disk.
    public let shareCards: ShareCardStore
    public let pages: PageRenderer
    let rendered: RenderedPages
    /// Complete share cards (`ShareCardRoutes`), kept 5 minutes.
    let renderedCards: RenderedPages
    /// Work pages start and do not wait for; stopped with the server.
    public let background: BackgroundWork
    let canonicalNames = CanonicalNames()
    /// Listen-submission tokens for the `/1/` API; nil: the API is off.
    let listenTokens: ListenTokens?
    /// What players said is playing now (`playing_now`), in memory only.
    let nowPlaying: NowPlaying
    /// Forwarding of received listens to Last.fm and ListenBrainz (a
    /// service of the server), when the server keeps an outbox.
    public let forwarding: ListenForwarding?
    /// Where listens players send are kept and queued for forwarding.
    let receivedListens: (any ReceivedListenStore)?
    /// In a fleet: tells the other instances whose listens changed here,
    /// and what people play now.
    let fleetNotices: (any FleetNotices)?
    /// Sign-in and session keys for the Last.fm-compatible `/2.0/` API;
    /// nil: that API is off.
    let mobileSignIn: MobileSignIn?
    /// ListenBrainz's profiles, for `lb:` users; nil: they cannot be added.
    public let listenBrainz: (any UserSource)?
    /// Syncs of `lb:` users that their pages start.
    public let listenBrainzSyncs: ListenBrainzSyncs?
    /// How long pages wait for slow upstream work they can do without.
    public struct Patience: Sendable {
        /// For Last.fm's spelling of a name, before serving without a redirect.
        public var nameLookup: Duration
        /// For an album's colours, before serving the page in house colours.
        public var albumColours: Duration

        /// For Last.fm's answers, over a whole request, before a page is
        /// served from saved copies or says Last.fm is slow
        /// (`AnswerDeadline`). Under 10 s with the name lookup's wait.
        public var lastFM: Duration

        /// For the database's answer to `/healthz`, before the instance
        /// says it is unavailable (HTTP 503).
        public var database: Duration

        public init(nameLookup: Duration = .seconds(2), albumColours: Duration = .milliseconds(1500), lastFM: Duration = .seconds(7),
                    database: Duration = .seconds(2)) {
            self.nameLookup = nameLookup
            self.albumColours = albumColours
            self.lastFM = lastFM
            self.database = database
        }
    }

    /// The work itself always carries on in the background, so the next
    /// visit gets the redirect or the colours.
    let patience: Patience

    public init(clock: WallClock, lastFM: LastFMClient, demo: DemoChartSource?, lists: any ListStore,
                settings: CurrentSettings, pages: PageRenderer, artwork: ArtworkStore, demoCovers: DemoCoverCatalogue,
                archive: (any ScrobbleArchive)? = nil, patience: Patience = Patience(), background: BackgroundWork = BackgroundWork(),
                accounts: (any AccountStore)? = nil, secureCookies: Bool = false,
                database: DatabaseHealth = DatabaseHealth(kind: "sqlite") { true }, shareCards: ShareCardStore,
                albumCovers: (any AlbumCoverStore)? = nil, listenTokens: (any ListenTokenStore)? = nil,
                mobileSessions: (any MobileSessionStore)? = nil, mobileVerifierSecret: Data? = nil,
                forwarding: ListenForwarding? = nil, receivedListens: (any ReceivedListenStore)? = nil,
                fleetNotices: (any FleetNotices)? = nil,
                listenBrainz: (any UserSource)? = nil, listenBrainzSyncs: ListenBrainzSyncs? = nil) {
        self.listenBrainz = listenBrainz
        self.listenBrainzSyncs = listenBrainzSyncs
        self.forwarding = forwarding
        self.fleetNotices = fleetNotices
        // Without a store of its own (tests), the archive then the outbox.
        self.receivedListens = receivedListens
        // Without a secret from the composition root, verifiers last as long as the process.
        let seal = mobileVerifierSecret.map(MobileVerifierSeal.init(secret:)) ?? .ephemeral()
        let tokens = listenTokens.map { ListenTokens(store: $0, clock: clock, accountsOn: accounts != nil, lists: lists, seal: seal) }
        self.listenTokens = tokens
        if let tokens, let mobileSessions {
            self.mobileSignIn = MobileSignIn(tokens: tokens, sessions: mobileSessions)
        } else {
            self.mobileSignIn = nil
        }
        self.nowPlaying = NowPlaying(clock: clock)
        self.shareCards = shareCards
        self.albumCovers = albumCovers.map { AlbumCovers(store: $0, albums: lastFM, clock: clock) }
        self.database = database
        self.signIn = accounts.map { SignInSessions(accounts: $0, clock: clock, secureCookies: secureCookies) }
        self.patience = patience
        self.background = background
        self.artwork = artwork
        self.demoCovers = demoCovers
        self.archive = archive
        self.settings = settings
        self.rendered = RenderedPages(clock: clock)
        self.renderedCards = RenderedPages(clock: clock, lifetime: 300, capacity: 500, maxBytes: 64 << 20)
        self.clock = clock
        self.lastFM = lastFM
        self.demo = demo
        self.lists = lists
        self.pages = pages
    }

    var apiKeyConfigured: Bool { lastFM.configuration.apiKey != nil }

    /// Who sent `request`: always the household when nobody signs in here.
    func viewer(of request: Request) async -> Viewer {
        guard let signIn else { return .household }
        return await signIn.viewer(of: request)
    }

    /// The settings that apply to `request`'s viewer.
    func settings(for request: Request) async -> Settings {
        await settings.current(for: await viewer(of: request).owner)
    }

    /// The one rule for where a user's listening comes from (the same as
    /// the command line's).
    public var sources: ListeningSources {
        ListeningSources(archive: archive, demo: demo, lastFM: lastFM, listenBrainz: listenBrainz, listenBrainzSyncs: listenBrainzSyncs)
    }

    func isDemo(_ user: Username) -> Bool { sources.isDemo(user) }


    /// Where `user`'s charts come from: the archive when it has them, else
    /// the demo or Last.fm.
    func charts(for user: Username) async -> any ChartSource { await sources.charts(for: user) }

    func profiles(for user: Username) -> any UserSource { sources.profiles(for: user) }

    func albums(for user: Username) -> any AlbumSource { sources.albums(for: user) }
}

/// Which database keeps the app's personal data, and whether it answers.
public struct DatabaseHealth: Sendable {
    /// "sqlite" or "postgresql".
    public let kind: String
    /// Whether a trivial query succeeds now (bounded by the caller).
    public let check: @Sendable () async -> Bool

    public init(kind: String, check: @escaping @Sendable () async -> Bool) {
        self.kind = kind
        self.check = check
    }
}
