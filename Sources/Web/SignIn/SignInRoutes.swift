import Foundation
import HTTPServing
import Hummingbird
import LastFM
import Logging
import Stores
import Sync
import VinylogueCore
import Workers

/// Signing in with Last.fm's web authentication, and out again:
///
/// - `GET /signin` sends the browser to Last.fm's approval page with a
///   callback to `/signin/return/{nonce}`, the nonce also in a short-lived
///   cookie, so a callback from a link someone else made (login CSRF) is
///   refused;
/// - `GET /signin/return/{nonce}?token=…` exchanges the token for the
///   account's name and Last.fm session key (`auth.getSession`, signed),
///   creates the account on the first sign-in (its list: the person and the
///   people they follow on Last.fm), and starts a new session, ending the
///   one the browser held;
/// - `POST /signout` ends the session everywhere.
///
/// Only mounted when a shared secret is configured.
struct SignInRoutes: Sendable {
    typealias Context = WebRequestContext

    let lastFM: LastFMClient
    let lists: any ListStore
    let pages: PageRenderer
    let clock: WallClock
    let sessions: SignInSessions
    /// History copies, when the server makes them.
    let copies: HistoryCopyWorker?
    let configuration: ServerConfiguration
    /// Where Last.fm sends people back to.
    let address: PublicAddress

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.signIn)) { _, _ in self.start() }
        router.get(RouterPath(SignInSessions.returnPath + "/:nonce")) { request, context in try await self.finish(request, context) }
        router.post(RouterPath(Paths.signOut)) { request, _ in try await self.signOut(request) }
    }

    /// To Last.fm's approval page.
    func start() -> Response {
        let nonce = SignInSessions.newToken()
        let lastFM = self.lastFM.configuration
        let callback = address.base + SignInSessions.returnPath + "/" + nonce
        var location = lastFM.authURL + (lastFM.authURL.contains("?") ? "&" : "?")
        location += "api_key=\(Paths.encode(lastFM.apiKey ?? ""))&cb=\(Paths.encode(callback))"
        var response = Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
        response.setCookie(sessions.stateCookie(nonce))
        return response
    }

    /// A refused sign-in: a page saying why, with the way to try again;
    /// nothing is stored and no session starts.
    func refused(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var page = MessagePage(title: "Sign-in did not work", heading: "Sign-in did not work", csrf: "", message: message)
        page.linkURL = Paths.signIn
        page.linkLabel = "Sign in again"
        var response = pages.response("message", page, status: status, headers: [.cacheControl: "no-store"])
        response.setCookie(sessions.clearedStateCookie())
        return response
    }

    func finish(_ request: Request, _ context: Context) async throws -> Response {
        guard let nonce = context.parameters.get("nonce"), SignInSessions.isWellFormed(nonce),
              let expected = request.cookies[SignInSessions.stateCookieName]?.value,
              CSRFProtection.constantTimeEqual(nonce, expected) else {
            return refused(.badRequest, "This sign-in was not started from this browser, or took longer than 10 minutes. Sign in again from here.")
        }
        guard let token = request.uri.queryParameters.get("token"), (1...128).contains(token.utf8.count),
              token.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }) else {
            return refused(.badRequest, "Last.fm did not send back a sign-in token. Sign in again and choose “Yes, allow access” on Last.fm.")
        }
        let lastFMSession: LastFMSession
        do {
            lastFMSession = try await self.lastFM.session(forToken: token)
        } catch {
            return refused(Self.status(for: error), Self.sentence(for: error))
        }
        let now = clock.now
        let (account, isNew) = try await sessions.accounts.signedIn(lastFMSession.name, lastFMSessionKey: lastFMSession.key, at: now)
        if isNew { await startList(for: account) }
        // The account's own history, copied into the archive so that every
        // page works at once and without Last.fm (Settings says so, and
        // can stop it); a later sign-in refreshes it when it is due. Queued
        // in the background: the browser is sent on without waiting for it.
        if let copies { _ = await copies.viewed(account.name) }
        let sessionToken = SignInSessions.newToken()
        try await sessions.accounts.startSession(digest: SignInSessions.digest(sessionToken), for: account, at: now,
                                                 expires: now.addingTimeInterval(sessions.lifetime),
                                                 replacing: SignInSessions.token(in: request).map(SignInSessions.digest))
        var response = Response(status: .seeOther, headers: [.location: Paths.home, .cacheControl: "no-store"])
        response.setCookie(sessions.sessionCookie(sessionToken))
        response.setCookie(sessions.clearedStateCookie())
        return response
    }

    /// A new account's list: the person, marked as "me", then everyone they
    /// follow on Last.fm. Friends that cannot be fetched now can be imported
    /// later from the users page.
    func startList(for account: Account) async {
        let list = lists.owned(by: account.owner)
        _ = try? await list.add(account.name)
        guard let friends = try? await self.lastFM.friends(of: account.name) else { return }
        _ = try? await list.addAll(friends.map(\.name))
    }

    func signOut(_ request: Request) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        if let token = SignInSessions.token(in: request) {
            try await sessions.accounts.endSession(digest: SignInSessions.digest(token))
        }
        var response = Response(status: .seeOther, headers: [.location: Paths.home, .cacheControl: "no-store"])
        response.setCookie(sessions.clearedSessionCookie())
        return response
    }

    static func status(for error: SourceError) -> HTTPResponse.Status {
        switch error {
        case .api(let code, _) where [4, 14, 15].contains(code): .badRequest
        default: .badGateway
        }
    }

    /// What went wrong, for the person signing in (never the token or a key).
    static func sentence(for error: SourceError) -> String {
        switch error {
        case .api(4, _), .api(15, _):
            "Last.fm did not accept this sign-in: it has expired or was already used. Sign in again."
        case .api(14, _):
            "Last.fm says access was not allowed. Sign in again and choose “Yes, allow access” on Last.fm."
        case .api(13, _), .invalidAPIKey, .missingAPIKey:
            "Last.fm refused this server’s credentials, so nobody can sign in right now. The person running this Vinylogue needs to check its Last.fm API key and secret."
        default:
            "Last.fm could not finish signing you in: \(error.message) Try again in a minute."
        }
    }
}
