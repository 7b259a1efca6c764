import Foundation
import Hummingbird

/// Double-submit CSRF protection: a random token lives in a SameSite=Strict,
/// HttpOnly cookie and in every form; a POST is accepted only when the two
/// match and, when the browser says where the form came from, that origin is
/// this host.
package struct CSRFProtection: Sendable {
    package static let cookieName = "vinylogue_csrf"

    /// The token for this browser, and whether it is new (to be set).
    package static func token(for request: Request) -> (value: String, isNew: Bool) {
        if let existing = request.cookies[cookieName]?.value, isWellFormed(existing) {
            return (existing, false)
        }
        var generator = SystemRandomNumberGenerator()
        let value = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
        return (value, true)
    }

    package static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    package static func cookie(_ token: String) -> Cookie {
        Cookie(name: cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict)
    }

    /// Throws 403 unless the form's token matches the cookie's.
    package static func verify(_ request: Request, form: FormFields) throws {
        if let origin = request.headers[.origin], origin != "null", let authority = request.head.authority,
           !isSameOrigin(origin, authority: authority) {
            throw HTTPError(.forbidden, message: "This form came from another site.")
        }
        guard let cookie = request.cookies[cookieName]?.value, isWellFormed(cookie),
              let submitted = form["csrf"], constantTimeEqual(cookie, submitted) else {
            throw HTTPError(.forbidden, message: "This form has expired. Go back, reload the page and try again.")
        }
    }

    /// Whether a form from `origin` (the browser's `Origin`) was served by
    /// the host the request names (`authority`, the Host header): the same
    /// host, and, when the Host names a port, the same port (an origin
    /// without one has its scheme's: 80, 443). Another app on the same host
    /// at another port is another site. A Host without a port (a proxy that
    /// passes `$host`) is matched by host alone.
    package static func isSameOrigin(_ origin: String, authority: String) -> Bool {
        guard let url = URL(string: origin), let originHost = url.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) else {
            return false
        }
        var host = authority.lowercased(), port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            port = Int(host[host.index(after: colon)...])
            host = String(host[..<colon])
        }
        guard host == originHost else { return false }
        guard let port else { return true }
        let originPort = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return originPort == port
    }

    package static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Response {
    /// Sets the CSRF cookie when the token was just made.
    package mutating func attach(csrf: (value: String, isNew: Bool)) {
        if csrf.isNew { setCookie(CSRFProtection.cookie(csrf.value)) }
    }
}
