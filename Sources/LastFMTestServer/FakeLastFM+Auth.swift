import Crypto
import Foundation
import VinylogueCore

/// Last.fm's web authentication, as the fake plays it:
///
/// 1. the application sends the person to `/api/auth/?api_key=…&cb=…`;
/// 2. they approve on the page the fake shows there (choosing which account
///    they are), and are sent back to `cb` with `token=…` added;
/// 3. the application calls `auth.getSession` with the token, signed with
///    the shared secret, and gets the account's name and session key.
///
/// As on Last.fm, a token lasts 60 minutes and works once; the errors are
/// 4 (no such token), 13 (bad signature), 14 (nobody approved the token) and
/// 15 (expired or already used).
extension FakeLastFM {
    struct IssuedToken: Sendable {
        /// The account that approved it, once someone has.
        var approvedFor: String?
        let issued: Date
        var used = false
    }

    static let tokenLifetime: TimeInterval = 3600

    /// A new token, approved by `user` already when given.
    func issueToken(approvedFor user: String?) -> String {
        let token = Self.randomHex()
        authTokens[token] = IssuedToken(approvedFor: user.map { account($0)?.name ?? $0 }, issued: clock.now)
        return token
    }

    /// The token a person approving this application as `user` would bring
    /// back: for tests that skip the approval page.
    public func approvedToken(for user: String) -> String { issueToken(approvedFor: user) }

    /// A token nobody has approved yet (as `auth.getToken` gives).
    public func unapprovedToken() -> String { issueToken(approvedFor: nil) }

    /// The session keys handed out, by account name: to check one is never shown.
    public func sessionKeysGiven() -> [String: String] { sessionKeys }

    func session(_ p: [String: String]) -> FakeReply {
        var signed = p
        signed["api_sig"] = nil
        guard let signature = p["api_sig"], signature == Self.signature(signed, secret: apiSecret) else {
            return .error(13, "Invalid method signature supplied", status: 403)
        }
        guard let token = p["token"], var issued = authTokens[token] else {
            return .error(4, "Invalid authentication token supplied", status: 403)
        }
        if issued.used || clock.now.timeIntervalSince(issued.issued) > Self.tokenLifetime {
            return .error(15, "This token has expired", status: 403)
        }
        guard let name = issued.approvedFor else {
            return .error(14, "Unauthorized Token - This token has not been authorized", status: 403)
        }
        issued.used = true
        authTokens[token] = issued
        let key = Self.randomHex()
        sessionKeys[name] = key
        return .json(Wire.SessionAnswer(session: .init(name: name, key: key)))
    }

    /// The approval page's answer: a token approved by `user`, sent back to
    /// `callback` as Last.fm does.
    func approve(user: String, callback: String) -> String {
        let token = issueToken(approvedFor: user)
        return callback + (callback.contains("?") ? "&" : "?") + "token=" + token
    }

    static func signature(_ parameters: [String: String], secret: String) -> String {
        let text = parameters.filter { $0.key != "format" && $0.key != "callback" }
            .sorted { $0.key < $1.key }.map { $0.key + $0.value }.joined() + secret
        return Insecure.MD5.hash(data: Data(text.utf8)).lowercaseHex
    }

    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// The page at `/api/auth/`: who is signing in, and a button to allow it.
    static func approvalPage(apiKey: String, callback: String, names: [String]) -> String {
        func escape(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let options = names.map { "<option>\(escape($0))</option>" }.joined()
        return """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Connect application · fake Last.fm</title></head>
        <body><h1>Connect application</h1>
        <p>An application wants to use your Last.fm account.</p>
        <form method="post" action="/api/auth/">
        <input type="hidden" name="api_key" value="\(escape(apiKey))">
        <input type="hidden" name="cb" value="\(escape(callback))">
        <label>Signed in to Last.fm as <select name="user">\(options)</select></label>
        <button type="submit">Yes, allow access</button>
        </form></body></html>
        """
    }
}
