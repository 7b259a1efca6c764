import HTTPTypes
import Hummingbird

/// Adds a strict Content-Security-Policy and related headers to every
/// response: scripts, styles and images only from this origin, no framing.
/// A header the response already has is left as it is (a kept page carries
/// them already; a route that may be framed says so itself, with a policy
/// of its own whose `frame-ancestors` allows it, and then gets no
/// `X-Frame-Options: DENY`: see `SecurityHeaderFields.missing(in:)`).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers.append(contentsOf: SecurityHeaderFields.missing(in: response.headers))
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
        HTTPField(name: frameOptions, value: "DENY"),
    ]

    static let frameOptions = HTTPField.Name("X-Frame-Options")!

    /// The fields of `all` that `headers` lacks. `X-Frame-Options: DENY` is
    /// left out when `headers` has a policy of its own that names who may
    /// frame the answer (`frame-ancestors` other than `'none'`: the widget
    /// page), since DENY would forbid what the policy allows.
    static func missing(in headers: HTTPFields) -> [HTTPField] {
        let framable = headers[.contentSecurityPolicy].map(allowsFraming) ?? false
        return all.filter { !headers.contains($0.name) && !(framable && $0.name == frameOptions) }
    }

    /// Whether `policy` has a `frame-ancestors` directive that lets some
    /// page frame the answer. A policy without one says nothing of framing,
    /// so `X-Frame-Options` still guards it.
    static func allowsFraming(_ policy: String) -> Bool {
        for directive in policy.split(separator: ";") {
            let words = directive.split(separator: " ")
            if words.first?.lowercased() == "frame-ancestors" { return words.dropFirst().contains { $0 != "'none'" } }
        }
        return false
    }
}
