import HTTPServing
import Hummingbird
import Stores
import Synchronization

/// Who is asking, and the settings their pages are made with: the
/// household's when nobody signs in, else the account's of the session
/// cookie (a visitor has the household's settings and no list).
struct Viewers: Sendable {
    /// Nil when nobody signs in (household mode).
    let signIn: SignInSessions?
    let settings: CurrentSettings

    /// Who asks `request`, as far as its head tells without the database:
    /// the household, a visitor without a session cookie, or a session
    /// whose account is looked up when first needed, once.
    func asker(of request: Request) -> Asker {
        guard let signIn else { return .known(.household) }
        guard let token = SignInSessions.token(in: request) else { return .known(.visitor) }
        return .session(SessionLookup(token: token, sessions: signIn))
    }

    /// A Settings form posted by a signed-in account: its fields (within
    /// `limit`, the CSRF token checked) and the account; `SignInRequired`
    /// saying `signInFirst` for anyone else.
    func accountForm(_ request: Request, _ context: WebRequestContext, limit: Int, signInFirst: String) async throws -> (FormFields, Account) {
        let form = try await FormFields.read(request, limit: limit)
        try CSRFProtection.verify(request, form: form)
        guard case .account(let account) = await context.viewer else { throw SignInRequired(message: signInFirst) }
        return (form, account)
    }

    /// The settings the request's viewer sees pages with.
    func settings(for context: WebRequestContext) async -> Settings {
        await settings.current(for: await context.viewer.owner)
    }
}

/// Who asks, as `ViewerMiddleware` found them in the request's head.
enum Asker: Sendable {
    /// Not resolved: no `ViewerMiddleware` before the route. Answered as a
    /// visitor, who may see least.
    case unknown
    /// Known from memory: the household, or a visitor with no session cookie.
    case known(Viewer)
    /// A session cookie, whose account is looked up once.
    case session(SessionLookup)

    func viewer() async -> Viewer {
        switch self {
        case .unknown: .visitor
        case .known(let viewer): viewer
        case .session(let lookup): await lookup.viewer()
        }
    }
}

/// The account of one request's session cookie, looked up in the database
/// the first time anything asks (the person's visibility, the route's
/// settings) and remembered for the rest of the request; whoever asks
/// meanwhile waits for that one lookup.
final class SessionLookup: Sendable {
    private enum State {
        case unasked
        case asking([CheckedContinuation<Viewer, Never>])
        case found(Viewer)
    }

    private let token: String
    private let sessions: SignInSessions
    private let state = Mutex(State.unasked)

    init(token: String, sessions: SignInSessions) {
        self.token = token
        self.sessions = sessions
    }

    func viewer() async -> Viewer {
        enum Next { case found(Viewer), ask, wait }
        let next: Next = state.withLock { state in
            switch state {
            case .found(let viewer): return .found(viewer)
            case .asking: return .wait
            case .unasked:
                state = .asking([])
                return .ask
            }
        }
        switch next {
        case .found(let viewer):
            return viewer
        case .ask:
            let viewer = await sessions.viewer(ofToken: token)
            let waiting: [CheckedContinuation<Viewer, Never>] = state.withLock { state in
                defer { state = .found(viewer) }
                if case .asking(let waiting) = state { return waiting }
                return []
            }
            waiting.forEach { $0.resume(returning: viewer) }
            return viewer
        case .wait:
            return await withCheckedContinuation { continuation in
                let found: Viewer? = state.withLock { state in
                    switch state {
                    case .found(let viewer): return viewer
                    case .asking(var waiting):
                        waiting.append(continuation)
                        state = .asking(waiting)
                        return nil
                    case .unasked: return .visitor  // never: `.wait` follows `.asking`
                    }
                }
                if let found { continuation.resume(returning: found) }
            }
        }
    }
}

/// Sets who asks (`WebRequestContext.asker`) on every request, from the
/// request's head alone: no route looks the viewer up itself, and the
/// session's account is read from the database at most once per request,
/// and only when something needs it.
struct ViewerMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let viewers: Viewers

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.asker = viewers.asker(of: request)
        return try await next(request, context)
    }
}
