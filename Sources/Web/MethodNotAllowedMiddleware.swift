import Foundation
import Hummingbird

/// Answers a request for an address that exists, made with a method it does
/// not answer (`DELETE /healthz`), with 405 and an `Allow` header naming the
/// methods that do work. Hummingbird's router answers 404 for both a wrong
/// method and an unknown path; unknown paths stay 404.
///
/// Add it after every route: a Hummingbird middleware wraps only the routes
/// added after it, and the router's not-found responder, so this one runs
/// only when the router found nothing to call.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The router's paths again, each answering GET with its methods in
    /// `Allow`. Resolving a path through Hummingbird's own trie picks the same
    /// route the router picked (captures, wildcards and their priorities).
    private let paths: RouterResponder<Context>

    /// - Parameters:
    ///   - routes: every route of the router (`Router.routes`, read once all
    ///     routes are added).
    ///   - headFollowsGet: whether the router answers HEAD wherever it answers
    ///     GET (`.autoGenerateHeadEndpoints`, which `routes` does not list).
    init(routes: [Router<Context>.RouteDescription], headFollowsGet: Bool) {
        var methods: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        let paths = Router(context: Context.self)
        for (path, allowed) in methods.values {
            var allowed = allowed
            if headFollowsGet, allowed.contains(.get) { allowed.insert(.head) }
            let allow = Self.headerValue(allowed)
            paths.on(path, method: .get, responder: CallbackResponder { _, _ in
                Response(status: .noContent, headers: [.allow: allow])
            })
        }
        self.paths = paths.buildResponder()
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allow = await allowedMethods(for: request, context: context) else { throw error }
            let names = allow.components(separatedBy: ", ")
            // A route that answered 404 itself (an unknown file) stays 404.
            guard !names.contains(request.method.rawValue) else { throw error }
            throw HTTPError(.methodNotAllowed, headers: [.allow: allow],
                            message: "This address answers \(Self.sentenceList(names)) requests, not \(request.method.rawValue).")
        }
    }

    /// The `Allow` value for the request's path, or `nil` when no route has it.
    private func allowedMethods(for request: Request, context: Context) async -> String? {
        var head = request.head
        head.method = .get
        let probe = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        guard let answer = try? await paths.respond(to: probe, context: context), answer.status == .noContent else { return nil }
        return answer.headers[.allow]
    }

    /// Methods in the order people expect to read them: GET, HEAD, POST, …
    static func headerValue(_ methods: Set<HTTPRequest.Method>) -> String {
        let usual: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]
        let ordered = usual.filter(methods.contains) + methods.subtracting(usual).sorted { $0.rawValue < $1.rawValue }
        return ordered.map(\.rawValue).joined(separator: ", ")
    }

    /// "GET", "GET and HEAD", "GET, HEAD and POST".
    static func sentenceList(_ names: [String]) -> String {
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }
}
