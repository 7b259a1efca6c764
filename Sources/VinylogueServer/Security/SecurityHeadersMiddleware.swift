import HTTPTypes
import Hummingbird

/// Adds a strict Content-Security-Policy and related headers to every
/// response: scripts, styles and images only from this origin, no framing.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}
