import Stores
import Sync
import Crypto
import Foundation
import VinylogueCore

/// Seals and opens the verifier `auth.getMobileSession` needs.
///
/// Players sign in the way pylast does: `username` and
/// `authToken = md5(username + md5(password))`, where the password is the
/// account's listen token. To check that, the server must know
/// `md5(token)` — and `md5(token)` is all a client needs to compute a valid
/// `authToken`, so it is as good as the password for this one call. No
/// one-way digest can be checked against an `authToken` (the username is
/// hashed in on the client's side), so the verifier cannot be made useless
/// to a thief; the least bad design is to keep it only encrypted (AES-GCM)
/// with a key that is not in the database: derived from the Last.fm API
/// secret on a server with accounts (the same on every instance of a
/// fleet), else from a random key file in the data directory. A stolen copy
/// of the database alone then signs nobody in; a thief with the key as well
/// can sign in on `/2.0/` (submit listens, nothing else) until the owner
/// makes a new token. The token itself stays a SHA-256 digest, so `/1/`
/// and the settings are never exposed. Changing the key (or the API
/// secret) leaves old verifiers unopenable: players sign in again after the
/// owner makes a new token, or send the token as `password` instead.
package struct MobileVerifierSeal: Sendable {
    private let key: SymmetricKey

    /// A seal whose key is derived from `secret` (never stored with the data).
    package init(secret: Data) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret),
                                     info: Data("vinylogue auth.getMobileSession verifier".utf8), outputByteCount: 32)
    }

    /// A seal with a key of its own that lives as long as the process (for tests).
    package static func ephemeral() -> MobileVerifierSeal {
        MobileVerifierSeal(secret: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// `md5(password)` in lowercase hex, sealed, as base64.
    package func verifier(forPassword password: String) -> String? {
        guard let box = try? AES.GCM.seal(Data(MobileSignIn.md5(password).utf8), using: key), let combined = box.combined else { return nil }
        return combined.base64EncodedString()
    }

    /// `md5(password)` from a sealed verifier; nil when it was sealed with another key.
    package func open(_ sealed: String) -> String? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
              let opened = try? AES.GCM.open(box, using: key) else { return nil }
        return String(decoding: opened, as: UTF8.self)
    }
}

/// `auth.getMobileSession` and the session keys it makes: who a player may
/// sign in as (an account by its Last.fm name, or the household's "me"),
/// with the account's listen token standing in for the password, and who a
/// session key submits for. Session keys are 128 random bits, shown once in
/// the sign-in answer and stored only as SHA-256 digests; each is tied to
/// the token it was made with (`MobileSessionStore`), so a new token stops
/// it. Neither is ever logged.
package struct MobileSignIn: Sendable {
    package let tokens: ListenTokens
    package let sessions: any MobileSessionStore

    package init(tokens: ListenTokens, sessions: any MobileSessionStore) {
        self.tokens = tokens
        self.sessions = sessions
    }

    /// What a sign-in came to.
    package enum Outcome: Sendable, Equatable {
        /// A new session key (shown once) for the archive user `name`.
        case session(key: String, name: Username)
        /// No such person, no token, or the wrong password.
        case refused
        /// A household without "me": listens would have nowhere to go.
        case nobody
        /// An `authToken` for a token whose verifier cannot be opened: made
        /// before this sign-in existed, or sealed with another key.
        case unverifiable
    }

    /// Signs `username` in with `authToken` (`md5(username + md5(token))`,
    /// as pylast sends it) or with `password` (the token itself, as
    /// Last.fm's current getMobileSession takes it), or with an
    /// Audioscrobbler 1.2 `handshake`: its time and `md5(md5(token) + time)`.
    package func signIn(username: String, authToken: String?, password: String?,
                handshake: (time: String, auth: String)? = nil) async throws -> Outcome {
        guard let name = Username(validating: username) else { return .refused }
        let verifier: MobileVerifier?
        if tokens.accountsOn {
            verifier = try await tokens.store.mobileVerifier(ofAccountNamed: name)
        } else {
            guard let me = try await tokens.lists.owned(by: .household).users().first(where: \.isMe) else { return .nobody }
            guard me.username.key == name.key else { return .refused }
            verifier = try await tokens.store.mobileVerifier(of: .household)
        }
        guard let verifier else { return .refused }
        let matches: Bool
        if let password {
            matches = Self.sameText(ListenTokens.digest(password), verifier.tokenDigest)
        } else if let authToken {
            guard let sealed = verifier.sealed, let passwordMD5 = tokens.seal.open(sealed) else { return .unverifiable }
            // The name as the player sent it: it is what the player hashed.
            matches = Self.sameText(Self.md5(username + passwordMD5), authToken.lowercased())
        } else if let handshake {
            guard let sealed = verifier.sealed, let passwordMD5 = tokens.seal.open(sealed) else { return .unverifiable }
            matches = Self.sameText(Self.md5(passwordMD5 + handshake.time), handshake.auth.lowercased())
        } else {
            matches = false
        }
        guard matches else { return .refused }
        switch try await tokens.resolution(of: verifier.holder) {
        case .user(let user, _):
            let key = Self.newSessionKey()
            try await sessions.startSession(digest: ListenTokens.digest(key), owner: verifier.holder.owner,
                                            tokenDigest: verifier.tokenDigest, at: tokens.clock.now)
            return .session(key: key, name: user)
        case .nobody: return .nobody
        case .invalid: return .refused
        }
    }

    /// Who the session key `key` submits for.
    package func resolve(sessionKey key: String) async throws -> ListenTokens.Resolution {
        guard Self.isWellFormed(key) else { return .invalid }
        return try await tokens.resolution(of: try await sessions.holder(ofSession: ListenTokens.digest(key)))
    }

    /// 128 random bits of the system's CSPRNG as 32 lowercase hex digits
    /// (the length of Last.fm's own session keys).
    package static func newSessionKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    package static func isWellFormed(_ key: String) -> Bool {
        key.utf8.count == 32 && key.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    package static func md5(_ text: String) -> String {
        Insecure.MD5.hash(data: Data(text.utf8)).lowercaseHex
    }

    /// Compares without stopping at the first difference.
    package static func sameText(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
