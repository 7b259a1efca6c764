import Foundation
import HTTPServing
import Hummingbird
import HummingbirdCore
import Imports
import ListenIngest
import Logging
import NIOCore
import ServiceLifecycle
import Stores
import Sync
import Workers

/// Builds the web app: every route, grouped by feature, behind the error
/// and security middleware.
///
/// `onServing` runs once the server listens, with the port it is bound to
/// (the one asked for, or the kernel's choice when port 0 was asked for):
/// the moment a supervisor or a test may send requests. With `tls`, the
/// server speaks only HTTPS.
public func buildApplication(configuration: HTTPServing.ServerConfiguration, parts: WebAppParts,
                             logger: Logger = Logger(label: "vinylogue.server"), tls: ServerTLS? = nil,
                             onServing: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    let address = PublicAddress(configuration)
    let shared = SharedParts(parts)
    // Hummingbird's own connection timer: it closes a connection that
    // has not delivered a whole request head within the timeout.
    // A body announced over its address's limit is refused from the head.
    let limits = BodyLimits.web(forms: configuration.maxBodyBytes, uploads: configuration.maxUploadBytes)
    // Who sent each request, for what tells clients apart (wrong site
    // passwords): stamped only where it is read, so an open site's every
    // request does not pay for it.
    // (The list is made anew for each connection: a handler belongs to one.)
    let stamping = configuration.sitePassword != nil
    let http1 = HTTPServerBuilder.http1(configuration: .init(
        additionalChannelHandlers: [EarlyBodyLimit(limits: limits)] + (stamping ? [ClientAddressStamp()] : []),
        idleTimeout: TimeAmount(configuration.idleTimeout)))
    let metrics = ServerMetrics(sources: .init(permits: parts.lastFM.permits, copies: parts.stores.historyCopies, outbox: parts.forwarding?.outbox,
                                               uploads: parts.uploads, jobs: parts.jobs, clock: parts.clock))
    // A kept page asked exactly as before is answered before the router;
    // not with a site password, which must see every request first.
    let digests = parts.mail.map { WeeklyDigests(parts: parts, mail: $0, sources: shared.sources, address: address) }
    // The runner is made with the parts, before the digests it runs.
    if let digests { parts.jobs?.register(digests) }
    let shortcut = configuration.sitePassword != nil ? nil
        : KeptPageShortcut(rendered: shared.rendered, viewers: shared.viewers, audiences: parts.audiences, nowPlaying: shared.nowPlaying,
                           metrics: metrics)
    return Application(
        router: KeptPagesFirst(router: buildRouter(configuration: configuration, parts: parts, shared: shared, address: address, metrics: metrics,
                                                   digests: digests),
                               shortcut: shortcut),
        server: try tls?.server(over: http1) ?? http1,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Vinylogue"),
        services: [parts.background] + (parts.forwarding.map { [$0 as any Service] } ?? [])
            + (parts.jobs.map { [$0 as any Service] } ?? [])
            + (parts.stores.notices.map {
                [FleetNoticeListener(notices: $0, changes: parts.changes, nowPlaying: shared.nowPlaying,
                                     audiences: parts.audiences)]
            } ?? []),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            address.listening(on: port)
            await onServing(port)
        },
        logger: logger)
}

/// What several route groups share, made once per app from its parts.
struct SharedParts: Sendable {
    /// Pages kept whole in memory, by what was asked.
    let rendered: RenderedPages
    /// Share cards kept whole in memory.
    let renderedCards: RenderedPages
    /// Everything kept of people's pages, and the one place that forgets it.
    let kept: KeptViews
    let nowPlaying: NowPlaying
    let sources: ListeningSources
    let viewers: Viewers
    let listenTokens: ListenTokens?
    let mobileSignIn: MobileSignIn?
    let received: ReceivedListens

    init(_ parts: WebAppParts) {
        let clock = parts.clock, stores = parts.stores
        rendered = RenderedPages(clock: clock)
        renderedCards = RenderedPages(clock: clock, lifetime: 300, capacity: 500, maxBytes: 64 << 20)
        kept = KeptViews(pages: rendered, cards: renderedCards, drawn: parts.shareCards)
        parts.changes.follow(kept)
        nowPlaying = NowPlaying(clock: clock)
        sources = parts.sources
        let accounts = parts.signsIn ? stores.accounts : nil
        viewers = Viewers(signIn: accounts.map { SignInSessions(accounts: $0, clock: clock, secureCookies: parts.secureCookies) },
                          settings: parts.settings)
        let seal = parts.mobileVerifierSecret.map(MobileVerifierSeal.init(secret:)) ?? .ephemeral()
        let tokens = ListenTokens(store: stores.listenTokens, clock: clock, accountsOn: accounts != nil, lists: stores.lists, seal: seal)
        listenTokens = tokens
        mobileSignIn = MobileSignIn(tokens: tokens, sessions: stores.mobileSessions)
        received = ReceivedListens(store: stores.receivedListens, forwarding: parts.forwarding, notices: stores.notices, changes: parts.changes,
                                   nowPlaying: nowPlaying, clock: clock)
    }
}

func buildRouter(configuration: ServerConfiguration, parts: WebAppParts, shared: SharedParts, address: PublicAddress,
                 metrics: ServerMetrics, digests: WeeklyDigests?) -> Router<WebRequestContext> {
    let clock = parts.clock, pages = parts.pages, stores = parts.stores, lists = stores.lists
    let sources = shared.sources, viewers = shared.viewers, rendered = shared.rendered
    let apiKeyConfigured = parts.lastFM.configuration.apiKey != nil
    let database = DatabaseHealth(kind: stores.kind.rawValue) { await stores.isReadable() }
    let patience = parts.patience
    // HEAD answers every GET route with its headers alone, as HTTP asks of a server.
    let router = Router(context: WebRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.get("/metrics") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: await metrics.scrape())))
    }
    router.add(middleware: SecurityHeadersMiddleware())
    // One count per credential for every listen API.
    let listenLimit = ListenRateLimit(clock: clock, limit: configuration.listenRateLimit)
    // Audioscrobbler 1.2's handshake comes to the root address, before the users page.
    let audioscrobbler = shared.mobileSignIn.map {
        AudioscrobblerRoutes(received: shared.received, signIn: $0, limit: listenLimit, clock: clock, address: address)
    }
    if let audioscrobbler { router.add(middleware: AudioscrobblerHandshakeMiddleware(routes: audioscrobbler)) }
    let sitePassword = configuration.sitePassword.map { SitePassword(password: $0, clock: clock) }
    if let sitePassword { router.add(middleware: SitePasswordMiddleware(password: sitePassword)) }
    router.add(middleware: AnswerDeadlineMiddleware(patience: patience.lastFM))
    router.add(middleware: ErrorPageMiddleware(pages: pages))
    // Who asks, from the request's head (the session's account read once, when needed).
    router.add(middleware: ViewerMiddleware(viewers: viewers))
    // A person's addresses: whose page it is and what this viewer may see
    // of it, decided once, before anything of theirs is read.
    let canonical = CanonicalNameLookup(names: CanonicalNames(), sources: sources, lists: lists, archive: stores.archive,
                                        background: parts.background, patience: patience.nameLookup, clock: clock)
    let people = router.group("/u/:user").add(middleware: PersonMiddleware(audiences: parts.audiences, canonical: canonical))
    let peopleAPI = router.group("/api/u/:user").add(middleware: PersonMiddleware(audiences: parts.audiences, canonical: nil))
    router.get("/healthz") { _, _ in try await HealthReport.response(database, rendered: rendered, patience: patience.database) }
    router.get("/openapi.json") { _, _ in StaticAssets.apiDescriptionResponse() }
    router.get("/static/:file") { _, context in
        if context.parameters.get("file") == "placeholder.svg" { return CoverRoutes.placeholder() }
        return StaticAssets.response(context.parameters.get("file") ?? "")
    }
    let covers = CoverRoutes(sources: sources, demoCovers: parts.demoCovers, artwork: parts.artwork,
                             albumCovers: AlbumCovers(store: stores.albumCovers, albums: parts.lastFM, clock: clock))
    let charts = ChartRoutes(sources: sources, viewers: viewers, pages: pages, rendered: rendered, nowPlaying: shared.nowPlaying,
                             background: parts.background, clock: clock, address: address)
    UsersRoutes(sources: sources, viewers: viewers, lists: lists, pages: pages, apiKeyConfigured: apiKeyConfigured,
                configuration: configuration, audiences: parts.audiences, notices: stores.notices).register(on: router)
    charts.register(people: people, api: peopleAPI)
    HistoryRoutes(sources: sources, viewers: viewers, pages: pages, rendered: rendered, clock: clock, address: address)
        .register(people: people, api: peopleAPI)
    EveryoneRoutes(sources: sources, viewers: viewers, lists: lists, pages: pages, rendered: rendered, audiences: parts.audiences,
                   clock: clock).register(on: router)
    let albumChoices = parts.albumFolding.map {
        AlbumChoiceRoutes(refolding: $0, archive: stores.archive, own: OwnListening(lists: lists), pages: pages, configuration: configuration)
    }
    albumChoices?.register(on: router)
    AlbumRoutes(sources: sources, viewers: viewers, pages: pages, artwork: parts.artwork, covers: covers, background: parts.background,
                albumColourPatience: patience.albumColours, clock: clock, address: address, choices: albumChoices).register(people: people)
    RediscoverRoutes(sources: sources, viewers: viewers, pages: pages, clock: clock).register(people: people)
    let years = YearRoutes(sources: sources, viewers: viewers, own: OwnListening(lists: lists), pages: pages, rendered: rendered, clock: clock, address: address)
    years.register(people: people, api: peopleAPI)
    PlaylistRoutes(sources: sources, viewers: viewers, clock: clock, pages: pages, own: OwnListening(lists: lists),
                   musicServers: parts.musicServers.map { OwnMusicServers(store: stores.musicServers, access: $0, queued: parts.jobs?.wakeup) },
                   listenBrainz: parts.listenBrainzPlaylists.map { save in OwnListenBrainz(outbox: stores.outbox, save: save) })
        .register(people: people)
    ShareCardRoutes(sources: sources, viewers: viewers, chartPages: charts, yearPages: years, covers: covers, shareCards: parts.shareCards,
                    kept: shared.renderedCards, clock: clock, address: address).register(people: people)
    WidgetRoutes(viewers: viewers, chartPages: charts, covers: covers, shareCards: parts.shareCards, rendered: rendered,
                 renderedCards: shared.renderedCards, pages: pages, address: address).register(people: people)
    covers.register(on: router, people: people)
    FeedRoutes(sources: sources, viewers: viewers, clock: clock, address: address).register(people: people)
    SettingsRoutes(viewers: viewers, lists: lists, listenTokens: shared.listenTokens, forwarding: parts.forwarding,
                   copies: parts.copiesHistories ? parts.copies : nil, uploads: parts.uploads, albumFolding: parts.albumFolding,
                   archive: stores.archive, changes: parts.changes, pages: pages, clock: clock,
                   apiKeyConfigured: apiKeyConfigured, configuration: configuration, address: address,
                   audiences: viewers.signIn != nil ? parts.audiences : nil, digests: digests,
                   musicServers: parts.musicServers.map { OwnMusicServers(store: stores.musicServers, access: $0, queued: parts.jobs?.wakeup) }).register(on: router)
    if let digests {
        DigestSettings(viewers: viewers, digests: digests, pages: pages, configuration: configuration).register(on: router)
    }
    if viewers.signIn != nil {
        AccountDeletion(viewers: viewers, eraser: stores.eraser, copies: parts.copies, changes: parts.changes,
                        audiences: parts.audiences, pages: pages, configuration: configuration).register(on: router)
        VisibilitySettings(viewers: viewers, store: stores.accounts, audiences: parts.audiences, changes: parts.changes,
                           pages: pages, configuration: configuration).register(on: router)
    }
    PersonalDownload(viewers: viewers, lists: lists, archive: stores.archive, outbox: parts.forwarding?.outbox, digests: stores.digests,
                     clock: clock).register(on: router)
    if let uploads = parts.uploads {
        ExportUploads(viewers: viewers, lists: lists, uploads: uploads, pages: pages, configuration: configuration).register(on: router)
    }
    if let sessions = viewers.signIn {
        SignInRoutes(lastFM: parts.lastFM, lists: lists, pages: pages, clock: clock, sessions: sessions, copies: parts.copies,
                     configuration: configuration, address: address).register(on: router)
    }
    if let tokens = shared.listenTokens {
        ListenBrainzRoutes(received: shared.received, clock: clock, tokens: tokens, limit: listenLimit).register(on: router)
    }
    if let signIn = shared.mobileSignIn {
        let audiences = parts.audiences
        let reads = LastFMReadAPI(archive: stores.archive, lists: lists, accounts: viewers.signIn?.accounts, visibility: { audiences.current },
                                  nowPlaying: shared.nowPlaying, signIn: signIn, albums: parts.lastFM)
        LastFMScrobbleRoutes(received: shared.received, clock: clock, signIn: signIn, limit: listenLimit, reads: reads, sitePassword: sitePassword)
            .register(on: router)
    }
    audioscrobbler?.register(on: router)
    router.get("/api/users") { _, context in
        guard let owner = await context.viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to see your list.")
        }
        return APIResponse.json(try UserListJSON(try await lists.owned(by: owner).users()).data())
    }
    // Last, so it wraps only the not-found answer (see its doc comment).
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes, headFollowsGet: true))
    return router
}
