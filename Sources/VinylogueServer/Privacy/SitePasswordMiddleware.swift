import Crypto
import Foundation
import Hummingbird

/// A whole instance kept private with one password (`VINYLOGUE_SITE_PASSWORD`):
/// every page, image, feed and JSON answer asks for it with HTTP Basic
/// authentication (any user name: browsers and feed readers remember it).
/// Players keep their own credentials: the listen APIs (`/1/`, `/2.0/`,
/// Audioscrobbler's), and the health and metrics addresses an operator's
/// tools read, are not asked. The password is compared by its SHA-256
/// digest, in constant time.
struct SitePasswordMiddleware<Context: RequestContext>: RouterMiddleware {
    let digest: SHA256.Digest

    init(password: String) {
        digest = SHA256.hash(data: Data(password.utf8))
    }

    /// Addresses that answer without the password: they carry their own
    /// credentials or none that matter.
    static func isOpen(_ path: String) -> Bool {
        path == "/healthz" || path == "/metrics" || path.hasPrefix("/1/") || path == "/2.0" || path.hasPrefix("/2.0/")
            || path == "/audioscrobbler" || path.hasPrefix("/audioscrobbler/") || path.hasPrefix("/static/") || path == "/openapi.json"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.isOpen(request.uri.path) || presentsPassword(request) { return try await next(request, context) }
        return Response(status: .unauthorized, headers: [
            .wwwAuthenticate: "Basic realm=\"Vinylogue\", charset=\"UTF-8\"",
            .contentType: "text/plain; charset=utf-8",
            .cacheControl: "no-store",
        ], body: .init(byteBuffer: ByteBuffer(string: "This Vinylogue is private. Enter the password its owner gave you; any user name will do.\n")))
    }

    /// Whether `Authorization: Basic …` carries the password.
    func presentsPassword(_ request: Request) -> Bool {
        guard let header = request.headers[.authorization], header.count < 4096,
              header.prefix(6).lowercased() == "basic ",
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let given = SHA256.hash(data: decoded[decoded.index(after: colon)...])
        // Digests of equal length, compared without stopping early.
        return zip(given, digest).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
