import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the web app: every route, grouped by feature, behind the error
/// and security middleware.
///
/// `onServing` runs once the server listens, with the port it is bound to
/// (the one asked for, or the kernel's choice when port 0 was asked for):
/// the moment a supervisor or a test may send requests. With `tls`, the
/// server speaks only HTTPS.
public func buildApplication(configuration: ServerConfiguration, dependencies: ServerDependencies,
                             logger: Logger = Logger(label: "vinylogue.server"), tls: ServerTLS? = nil,
                             onServing: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    let address = PublicAddress(configuration)
    // Hummingbird's own connection timer: it closes a connection that
    // has not delivered a whole request head within the timeout.
    // A body announced over its address's limit is refused from the head.
    let limits = BodyLimits(forms: configuration.maxBodyBytes)
    let http1 = HTTPServerBuilder.http1(configuration: .init(additionalChannelHandlers: [EarlyBodyLimit(limits: limits)],
                                                             idleTimeout: TimeAmount(configuration.idleTimeout)))
    return Application(
        router: buildRouter(configuration: configuration, dependencies: dependencies, address: address),
        server: try tls?.server(over: http1) ?? http1,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Vinylogue"),
        services: [dependencies.background] + (dependencies.forwarding.map { [$0 as any Service] } ?? [])
            + (dependencies.fleetNotices.map {
                [FleetNoticeListener(notices: $0, rendered: dependencies.rendered, renderedCards: dependencies.renderedCards,
                                     nowPlaying: dependencies.nowPlaying)]
            } ?? []),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            address.listening(on: port)
            await onServing(port)
        },
        logger: logger)
}

/// The router alone, for tests that drive it without a socket.
public func buildRouter(configuration: ServerConfiguration, dependencies: ServerDependencies) -> Router<BasicRequestContext> {
    buildRouter(configuration: configuration, dependencies: dependencies, address: PublicAddress(configuration))
}

func buildRouter(configuration: ServerConfiguration, dependencies: ServerDependencies, address: PublicAddress) -> Router<BasicRequestContext> {
    // HEAD answers every GET route with its headers alone (it was 404).
    let router = Router(options: .autoGenerateHeadEndpoints)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: AnswerDeadlineMiddleware(patience: dependencies.patience.lastFM))
    router.add(middleware: ErrorPageMiddleware(pages: dependencies.pages))
    router.add(middleware: CanonicalUserPathMiddleware(dependencies: dependencies))
    router.get("/healthz") { _, _ in try await HealthReport.response(dependencies.database, rendered: dependencies.rendered, patience: dependencies.patience.database) }
    router.get("/static/:file") { _, context in
        if context.parameters.get("file") == "placeholder.svg" { return CoverRoutes.placeholder() }
        return StaticAssets.response(context.parameters.get("file") ?? "")
    }
    UsersRoutes(dependencies: dependencies, configuration: configuration).register(on: router)
    ChartRoutes(dependencies: dependencies, address: address).register(on: router)
    HistoryRoutes(dependencies: dependencies, address: address).register(on: router)
    EveryoneRoutes(dependencies: dependencies).register(on: router)
    AlbumRoutes(dependencies: dependencies, address: address).register(on: router)
    RediscoverRoutes(dependencies: dependencies).register(on: router)
    ShareCardRoutes(dependencies: dependencies, address: address).register(on: router)
    CoverRoutes(dependencies: dependencies).register(on: router)
    FeedRoutes(dependencies: dependencies, address: address).register(on: router)
    SettingsRoutes(dependencies: dependencies, configuration: configuration, address: address).register(on: router)
    if let sessions = dependencies.signIn {
        SignInRoutes(dependencies: dependencies, sessions: sessions, configuration: configuration, address: address).register(on: router)
    }
    // One count per credential for both listen APIs.
    let listenLimit = ListenRateLimit(clock: dependencies.clock, limit: configuration.listenRateLimit)
    if let tokens = dependencies.listenTokens {
        ListenBrainzRoutes(dependencies: dependencies, tokens: tokens, limit: listenLimit).register(on: router)
    }
    if let signIn = dependencies.mobileSignIn {
        LastFMScrobbleRoutes(dependencies: dependencies, signIn: signIn, limit: listenLimit).register(on: router)
    }
    router.get("/api/users") { request, _ in
        guard let owner = await dependencies.viewer(of: request).owner else {
            throw SignInRequired(message: "Sign in with Last.fm to see your list.")
        }
        return APIResponse.json(try UserListJSON(try await dependencies.lists.owned(by: owner).users()).data())
    }
    // Last, so it wraps only the not-found answer (see its doc comment).
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes, headFollowsGet: true))
    return router
}
