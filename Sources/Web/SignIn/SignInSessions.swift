import Crypto
import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// Who is asking: the household (nobody signs in on this server), a visitor
/// who has not signed in, or a signed-in account.
enum Viewer: Sendable, Hashable {
    case household
    case visitor
    case account(Account)

    /// Whose list and settings apply; nil for a visitor, who has neither.
    var owner: ListOwner? {
        switch self {
        case .household: .household
        case .visitor: nil
        case .account(let account): account.owner
        }
    }
}

/// Sign-in sessions as the browser sees them: a random token in an
/// `HttpOnly; SameSite=Lax` cookie (`Secure` behind https), looked up by
/// its SHA-256 digest in the shared database, so a session started on one
/// instance works on every instance on that database and ends everywhere at
/// once when it is signed out of or expires.
struct SignInSessions: Sendable {
    static let cookieName = "vinylogue_session"
    /// Holds the nonce that ties Last.fm's callback to the browser that
    /// started signing in (against login CSRF).
    static let stateCookieName = "vinylogue_signin"
    /// Where Last.fm sends people back; the nonce follows as a path segment.
    static let returnPath = "/signin/return"

    let accounts: any AccountStore
    let clock: WallClock
    /// How long a session lasts from sign-in.
    let lifetime: TimeInterval
    /// Cookies carry `Secure` (the public URL is https).
    let secureCookies: Bool

    init(accounts: any AccountStore, clock: WallClock, lifetime: TimeInterval = 30 * 86_400, secureCookies: Bool) {
        self.accounts = accounts
        self.clock = clock
        self.lifetime = lifetime
        self.secureCookies = secureCookies
    }

    /// 256 random bits as 64 lowercase hex digits.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    static func isWellFormed(_ token: String) -> Bool { CSRFProtection.isWellFormed(token) }

    /// What the database stores for `token`.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).lowercaseHex
    }

    /// The session token the request carries, when well formed.
    static func token(in request: Request) -> String? {
        guard let value = request.cookies[cookieName]?.value, isWellFormed(value) else { return nil }
        return value
    }

    /// The signed-in account of a session cookie's `token`, or `.visitor`
    /// for a token that is not one of ours (tampered, expired, signed out)
    /// or a database that cannot be read. Only `SessionLookup` asks, once
    /// per request.
    func viewer(ofToken token: String) async -> Viewer {
        guard let account = try? await accounts.account(forSession: Self.digest(token), at: clock.now) else { return .visitor }
        return .account(account)
    }

    func sessionCookie(_ token: String) -> Cookie {
        Cookie(name: Self.cookieName, value: token, maxAge: Int(lifetime), path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax)
    }

    /// Tells the browser to forget its session cookie.
    func clearedSessionCookie() -> Cookie {
        Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax)
    }

    /// The nonce cookie, for 10 minutes, sent back only to the return path.
    func stateCookie(_ nonce: String) -> Cookie {
        Cookie(name: Self.stateCookieName, value: nonce, maxAge: 600, path: Self.returnPath, secure: secureCookies, httpOnly: true, sameSite: .lax)
    }

    func clearedStateCookie() -> Cookie {
        Cookie(name: Self.stateCookieName, value: "", maxAge: 0, path: Self.returnPath, secure: secureCookies, httpOnly: true, sameSite: .lax)
    }
}

/// What a visitor who has not signed in asked for needs an account: the
/// page says so and links to signing in (403; 401 under `/api/`).
struct SignInRequired: Error {
    let message: String
}
