import HTTPTypes
import Hummingbird

/// Adds a strict Content-Security-Policy and related headers to every
/// response: scripts, styles and images only from this origin, no framing.
/// A header the response already has is left as it is (a kept page carries
/// them already; a route that may be framed says so itself).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for field in SecurityHeaderFields.all where !response.headers.contains(field.name) {
            response.headers.append(field)
        }
        return response
    }
}

/// The headers `SecurityHeadersMiddleware` adds, built once (constructing a
/// field validates its value, which showed in the warm-page profile).
enum SecurityHeaderFields {
    static let all: [HTTPField] = [
        HTTPField(name: .contentSecurityPolicy, value: SecurityHeadersMiddleware<BasicRequestContext>.policy),
        HTTPField(name: .xContentTypeOptions, value: "nosniff"),
        HTTPField(name: HTTPField.Name("Referrer-Policy")!, value: "same-origin"),
        HTTPField(name: HTTPField.Name("X-Frame-Options")!, value: "DENY"),
    ]
}
