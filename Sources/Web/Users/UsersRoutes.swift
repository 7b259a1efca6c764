import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/` and the `/users` actions: add, rename, reorder, remove, mark as me,
/// and import friends from Last.fm.
struct UsersRoutes: Sendable {
    typealias Context = WebRequestContext

    let sources: ListeningSources
    let viewers: Viewers
    let lists: any ListStore
    let pages: PageRenderer
    /// Whether a Last.fm API key is set (people can be added from Last.fm).
    let apiKeyConfigured: Bool
    let configuration: ServerConfiguration
    /// Who may see whom: a list change can make or end a friendship.
    let audiences: Audiences
    let notices: (any FleetNotices)?

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.home)) { request, context in try await self.list(request, context) }
        router.post(RouterPath(Paths.users)) { request, context in try await self.add(request, context) }
        router.post(RouterPath(Paths.usersReorder)) { request, context in try await self.reorder(request, context) }
        router.post("/users/:user/:action") { request, context in try await self.act(request, context) }
        router.post(RouterPath(Paths.friendsImport)) { request, context in try await self.importFriends(request, context) }
    }

    /// The list the request's viewer may change; a visitor who has not
    /// signed in has none, and is told to sign in.
    func list(for context: Context) async throws -> (any ListStore, Viewer) {
        let viewer = await context.viewer
        return (try list(for: viewer), viewer)
    }

    func list(for viewer: Viewer) throws -> any ListStore {
        guard let owner = viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to keep your own list of friends.")
        }
        return lists.owned(by: owner)
    }

    func page(for viewer: Viewer, csrf: String) async throws -> UsersPage {
        var page = UsersPage(users: try await list(for: viewer).users(), csrf: csrf, apiKeyConfigured: apiKeyConfigured)
        page.demoOn = sources.demo != nil
        if case .account(let account) = viewer { page.signedInAs = account.name.value }
        return page
    }

    func list(_ request: Request, _ context: Context) async throws -> Response {
        let csrf = CSRFProtection.token(for: request)
        let viewer = await context.viewer
        if viewer == .visitor {
            var response = pages.response("welcome", WelcomePage(csrf: csrf.value))
            response.attach(csrf: csrf)
            return response
        }
        var page = try await page(for: viewer, csrf: csrf.value)
        if let imported = request.uri.queryParameters.get("imported", as: Int.self) {
            page.notice = imported == 0 ? "Everyone you follow on Last.fm is already listed."
                : imported == 1 ? "Added 1 friend from Last.fm." : "Added \(imported) friends from Last.fm."
        }
        var response = pages.response("users", page)
        response.attach(csrf: csrf)
        return response
    }

    /// Validates `raw` with Last.fm and returns its canonical spelling, or
    /// the sentence to show.
    func confirm(_ raw: String) async -> Result<Username, FormProblem> {
        let name: Username
        do { name = try Username(raw) } catch { return .failure(FormProblem(error.description)) }
        // Someone whose history is in the archive (an import, a copy) is
        // known by the name it was stored under: no Last.fm asked, so a
        // server without an API key lists them too.
        if let stored = try? await sources.archive?.storedName(of: name) { return .success(stored) }
        do {
            return .success(try await sources.profiles(for: name).user(name).name)
        } catch {
            return .failure(FormProblem(UsersPage.addError(raw, error)))
        }
    }

    struct FormProblem: Error { let message: String; init(_ m: String) { message = m } }

    func rerender(_ request: Request, _ context: Context, form: FormFields, problem: String) async throws -> Response {
        var page = try await page(for: await context.viewer, csrf: form["csrf"] ?? "")
        page.formError = problem
        page.formValue = form["username"]
        return pages.response("users", page, status: .unprocessableContent)
    }

    func add(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        switch await confirm(form["username"] ?? "") {
        case .failure(let problem):
            return try await rerender(request, context, form: form, problem: problem.message)
        case .success(let name):
            try await list(for: context).0.add(name)
            await audiences.listsChanged(notices: notices, user: name)
            return .redirect(to: Paths.home, type: .normal)
        }
    }

    func act(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let user = try RouteParameters.user(context)
        let lists = try await list(for: context).0
        switch context.parameters.get("action") {
        case "move": try await lists.move(user, by: form["direction"] == "up" ? -1 : 1)
        case "remove": try await lists.remove(user)
        case "me": try await lists.setMe(user)
        case "rename":
            switch await confirm(form["username"] ?? "") {
            case .failure(let problem):
                return try await rerender(request, context, form: form, problem: problem.message)
            case .success(let name):
                if try await !lists.rename(user, to: name) {
                    return try await rerender(request, context, form: form, problem: "\(name) is already on the list.")
                }
            }
        default:
            throw HTTPError(.notFound)
        }
        await audiences.listsChanged(notices: notices, user: user)
        return .redirect(to: Paths.home, type: .normal)
    }

    func reorder(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let names = (form["order"] ?? "").split(separator: ",").compactMap { Username(validating: String($0)) }
        try await list(for: context).0.reorder(names)
        return Response(status: .noContent)
    }

    func importFriends(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let lists = try await list(for: context).0
        guard let me = try await lists.users().first(where: \.isMe)?.username else {
            return try await rerender(request, context, form: form, problem: "Add yourself first, then import your friends.")
        }
        do {
            let friends = try await sources.profiles(for: me).friends(of: me)
            let added = try await lists.addAll(friends.map(\.name))
            if !added.isEmpty { await audiences.listsChanged(notices: notices, user: me) }
            return .redirect(to: Paths.home + "?imported=\(added.count)", type: .normal)
        } catch let error as SourceError {
            return try await rerender(request, context, form: FormFields(values: ["csrf": form["csrf"] ?? ""]),
                                      problem: "Could not import friends: \(error.forVisitors)")
        }
    }
}
