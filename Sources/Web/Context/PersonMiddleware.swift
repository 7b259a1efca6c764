import Hummingbird
import Sync
import VinylogueCore

/// Decides, once per request and before anything of theirs is read, whose
/// page a person's address names and what the viewer may see of it
/// (`WebRequestContext.person`). It is the middleware of the route groups
/// `/u/{user}` and `/api/u/{user}`, so it reads the name from the route's
/// own `{user}` parameter (`RouteParameters.user`, the one reading of it).
///
/// - A person the viewer may not see (`Audiences`) is concealed for the
///   rest of the request: every route answers as for a name Last.fm does
///   not know, headers and all.
/// - A restricted person's pages, to a viewer they chose, are marked
///   private (no shared cache may keep them).
/// - A GET or HEAD of a page (`canonical` is given for `/u/…` only) in
///   another casing than Last.fm's is redirected to Last.fm's spelling,
///   so a user's pages are rendered, kept and shared under one address;
///   never for a concealed person.
///
/// A segment that is no username leaves `person` nil; each route says so
/// (`WebRequestContext.requiredPerson()`).
struct PersonMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let audiences: Audiences
    /// Last.fm's spelling of names, for the pages' redirect; nil for the JSON.
    let canonical: CanonicalNameLookup?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let raw = context.parameters.get("user"), let name = RouteParameters.user(raw) else {
            return try await next(request, context)
        }
        var context = context
        let isRestricted = audiences.isRestricted(name)
        let isConcealed = isRestricted ? await audiences.conceals(name, from: await context.viewer) : false
        context.person = PersonOnPage(name: name, isConcealed: isConcealed, isRestricted: isRestricted)
        var response: Response
        if !isConcealed, let location = await canonicalAddress(request, raw: raw, name: name) {
            response = Response(status: .found, headers: [.location: location, .cacheControl: "no-cache"])
        } else {
            response = try await next(request, context)
        }
        if isRestricted && !isConcealed {
            // The person's own page, for a viewer they chose: no shared cache may keep it.
            response.headers[.cacheControl] = "private, no-cache"
            response.headers[.vary] = "Cookie"
        }
        return response
    }

    /// The address with Last.fm's spelling of the name, when the request
    /// is a GET or HEAD of a page written in another (the path's rest and
    /// the query kept); nil when it is written so already or the spelling
    /// cannot be learned now.
    func canonicalAddress(_ request: Request, raw: String, name: Username) async -> String? {
        guard let canonical, request.method == .get || request.method == .head,
              // A name written percent-encoded is no spelling of Last.fm's.
              !raw.contains("%"),
              !canonical.names.isCanonical(raw[...]),
              let found = await canonical.canonicalName(of: name), found.value != raw else { return nil }
        let path = request.uri.path, prefix = "/u/" + raw
        guard path.hasPrefix(prefix) else { return nil }
        var location = "/u/\(found.value)\(path.dropFirst(prefix.count))"
        if let query = request.uri.query, !query.isEmpty { location += "?\(query)" }
        return location
    }
}
