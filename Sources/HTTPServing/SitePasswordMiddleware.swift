import Crypto
import Foundation
import Hummingbird
import Logging
import VinylogueCore

/// A whole instance kept private with one password (`VINYLOGUE_SITE_PASSWORD`),
/// asked with HTTP Basic authentication (any user name: browsers and feed
/// readers remember it). The password is compared by its SHA-256 digest,
/// in constant time; wrong ones are slowed per client address
/// (`PasswordAttempts`), and each delay they begin is logged with the
/// address (never with what was sent).
package struct SitePassword: Sendable {
    /// What a request's credentials come to.
    package enum Verdict: Equatable {
        case allowed
        /// No password, or a wrong one.
        case refused
        /// Its address sent too many wrong ones: nothing was checked; it
        /// may try again in this many seconds.
        case slowed(seconds: Int)
    }

    package let digest: SHA256.Digest
    package let attempts: PasswordAttempts
    package let logger: Logger

    package init(password: String, clock: WallClock, logger: Logger = Logger(label: "vinylogue.site-password")) {
        digest = SHA256.hash(data: Data(password.utf8))
        attempts = PasswordAttempts(clock: clock)
        self.logger = logger
    }

    /// Whether `request` may go on. Only a Basic password counts as a
    /// guess: a request without one (a browser's first) is just refused.
    package func check(_ request: Request) -> Verdict {
        guard let header = request.headers[.authorization], header.prefix(6).lowercased() == "basic " else { return .refused }
        let address = ClientAddress.key(request.headers[ClientAddress.field] ?? "local")
        if let wait = attempts.delay(for: address) { return .slowed(seconds: max(1, Int(wait.rounded(.up)))) }
        if Self.password(in: header).map(matches) == true {
            attempts.succeeded(address)
            return .allowed
        }
        let (failures, delay) = attempts.failed(address)
        if let delay {
            logger.warning("wrong site password from \(address), \(failures) in a row: its requests are answered 429 for \(Int(delay)) s")
        }
        return .refused
    }

    /// What `Authorization: Basic …` carries after its user name.
    package static func password(in header: String) -> Data? {
        guard header.count < 4096,
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return decoded[decoded.index(after: colon)...]
    }

    package func matches(_ given: Data) -> Bool {
        // Digests of equal length, compared without stopping early.
        zip(SHA256.hash(data: given), digest).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    package static let challenge = "Basic realm=\"Vinylogue\", charset=\"UTF-8\""

    /// "Too many wrong passwords…", with when to try again.
    package static func slowedSentence(_ seconds: Int) -> String {
        "Too many wrong passwords came from your address, so none is checked for \(seconds == 1 ? "a second" : "\(seconds) seconds"): "
            + "wait, then try again with the password its owner gave you."
    }
}

/// Asks every page, image, feed and JSON answer for the site password.
/// Players keep their own credentials: the listen APIs (`/1/`, `/2.0/`,
/// Audioscrobbler's) are not asked here (`/2.0/`'s read methods ask for it
/// themselves, or for a session key: `LastFMScrobbleRoutes`), nor are the
/// health and metrics addresses an operator's tools read.
package struct SitePasswordMiddleware<Context: RequestContext>: RouterMiddleware {
    package let password: SitePassword

    package init(password: SitePassword) {
        self.password = password
    }

    /// Addresses that answer without the password: they carry their own
    /// credentials or none that matter.
    package static func isOpen(_ path: String) -> Bool {
        path == "/healthz" || path == "/metrics" || path.hasPrefix("/1/") || path == "/2.0" || path.hasPrefix("/2.0/")
            || path == "/audioscrobbler" || path.hasPrefix("/audioscrobbler/") || path.hasPrefix("/static/") || path == "/openapi.json"
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.isOpen(request.uri.path) { return try await next(request, context) }
        switch password.check(request) {
        case .allowed:
            return try await next(request, context)
        case .refused:
            return Self.text(.unauthorized, "This Vinylogue is private. Enter the password its owner gave you; any user name will do.",
                             [.wwwAuthenticate: SitePassword.challenge])
        case .slowed(let seconds):
            return Self.text(.tooManyRequests, SitePassword.slowedSentence(seconds), [.retryAfter: String(seconds)])
        }
    }

    package static func text(_ status: HTTPResponse.Status, _ sentence: String, _ extra: HTTPFields) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: sentence + "\n")))
    }
}
