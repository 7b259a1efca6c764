import Foundation
import HTTPServing
import Hummingbird
import ListenIngest
import Stores
import Sync
import VinylogueCore

/// Answers a request for a kept chart page (or its JSON) before the router
/// (its path is not even resolved) and the middleware, when it is asked
/// exactly as an earlier request asked it (`RenderedPages.aliased`): the
/// warm page costs a lookup and the headers it was kept with, security
/// headers included. `KeptPagesFirst` puts it in front of the router.
///
/// Only what the route itself would answer from the same kept entry is
/// answered here; anything else goes on to the route:
/// - GET only, and only for viewers whose settings are known without the
///   database: everyone in a household, a visitor with no session cookie
///   on a server with accounts (a signed-in viewer goes to the route);
/// - the settings the page was kept under are the viewer's settings now;
/// - the person is not restricted (`Audiences`): who may see them is the
///   route's to decide, with the viewer;
/// - a chart page is not answered while the person's player says what it
///   plays (the route makes that page fresh);
/// - the kept entry is still there and fresh (else the route makes it).
///
/// Not used with a site password (`SitePasswordMiddleware` must see every
/// request first). The request metrics are recorded here under the route's
/// pattern, as `RequestMetricsMiddleware` would.
struct KeptPageShortcut: Sendable {
    let rendered: RenderedPages
    let viewers: Viewers
    let audiences: Audiences
    let nowPlaying: NowPlaying
    /// Where requests are counted (nil: not counted, in a test of this alone).
    let metrics: ServerMetrics?

    /// The kept answer to `request`, or nil when the route must answer.
    func answer(_ request: Request) async -> Response? {
        let start = ContinuousClock.now
        guard request.method == .get, let settings = await settingsWithoutDatabase(request),
              let (alias, entry) = rendered.aliased(request.uri.description, settings: settings.fingerprint),
              !audiences.isRestricted(alias.user),
              !alias.showsNowPlaying || nowPlaying.track(of: alias.user) == nil else { return nil }
        let response = RenderedPages.response(entry, to: request)
        metrics?.record(route: alias.route, method: "GET", status: response.status.code, duration: .now - start)
        return response
    }

    /// The viewer's settings when they can be known from memory: the
    /// household's, or a visitor's defaults; nil for a session cookie
    /// (`Viewers.asker(of:)`, the same reading of the head the router's
    /// `ViewerMiddleware` makes).
    func settingsWithoutDatabase(_ request: Request) async -> Settings? {
        guard case .known(let viewer) = viewers.asker(of: request) else { return nil }
        return await viewers.settings.current(for: viewer.owner)
    }
}

/// The router, with `KeptPageShortcut` in front of it (when there is one).
struct KeptPagesFirst<Router: HTTPResponderBuilder>: HTTPResponderBuilder where Router.Responder.Context == WebRequestContext {
    let router: Router
    let shortcut: KeptPageShortcut?

    func buildResponder() -> KeptPageResponder<Router.Responder> {
        KeptPageResponder(inner: router.buildResponder(), shortcut: shortcut)
    }
}

/// Answers from `shortcut` when it can, else from the router.
struct KeptPageResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == WebRequestContext {
    typealias Context = WebRequestContext
    let inner: Inner
    let shortcut: KeptPageShortcut?

    func respond(to request: Request, context: Context) async throws -> Response {
        if let shortcut, let kept = await shortcut.answer(request) { return kept }
        return try await inner.respond(to: request, context: context)
    }
}
