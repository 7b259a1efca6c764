import Crypto
import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// Listen-submission tokens as players present them (`Authorization: Token
/// …`): made from 256 random bits of the system's CSPRNG, stored only as
/// their SHA-256 digest (`ListenTokenStore`), and resolved to the one
/// archive user their owner may submit for. A token is never logged and
/// never echoed in an answer. Each token also gets a sealed verifier for
/// the Last.fm-compatible sign-in (`MobileSignIn`).
package struct ListenTokens: Sendable {
    package let store: any ListenTokenStore
    package let clock: WallClock
    /// Whether this server has accounts (sign-in): then only accounts'
    /// tokens work; without, only the household's.
    package let accountsOn: Bool
    /// The household's list, whose "me" is the household's archive user.
    package let lists: any ListStore
    /// Seals each new token's `auth.getMobileSession` verifier.
    package let seal: MobileVerifierSeal

    package init(store: any ListenTokenStore, clock: WallClock, accountsOn: Bool, lists: any ListStore, seal: MobileVerifierSeal) {
        self.store = store
        self.clock = clock
        self.accountsOn = accountsOn
        self.lists = lists
        self.seal = seal
    }

    /// The archive user a token submits for, or why it cannot be used.
    package enum Resolution: Sendable, Equatable {
        /// The archive user its listens go to, and whose token it is (whose
        /// forwarding choices apply).
        case user(Username, owner: ListOwner)
        /// No such token (wrong, replaced, or made in the other mode).
        case invalid
        /// A household token, but nobody on the list is marked as "me".
        case nobody
    }

    /// 256 random bits as 64 lowercase hex digits.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    package static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).lowercaseHex
    }

    /// Makes a new token for `owner`, replacing its old one, and returns it
    /// (the only time it is ever seen: only its digest is kept).
    package func renew(for owner: ListOwner) async throws -> String {
        let token = Self.newToken()
        try await store.replaceToken(of: owner, digest: Self.digest(token), mobileVerifier: seal.verifier(forPassword: token), at: clock.now)
        return token
    }

    /// The token in `Authorization: Token …` (ListenBrainz's scheme; the
    /// word is matched without regard to case), if any.
    package static func presented(in request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        // Asked on every listen: Swift's own string work, not Foundation's.
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].count == 5, parts[0].lowercased() == "token" else { return nil }
        let token = String(parts[1]).trimmingWhitespace()
        return token.isEmpty ? nil : token
    }

    /// Who `token` submits for.
    package func resolve(_ token: String) async throws -> Resolution {
        // Anything that is not shaped like our tokens is not looked up.
        guard CSRFProtection.isWellFormed(token) else { return .invalid }
        return try await resolution(of: try await store.holder(ofToken: Self.digest(token)))
    }

    /// Whom a token's listens are for, decided from its holder alone, so
    /// the store can read the holder in the transaction that keeps them
    /// (`ReceivedListenStore.keep(_:sentWithToken:sender:…)`): with
    /// accounts, an account's token sends for that account. Nil without
    /// accounts: the household's listens go to whoever its list marks as
    /// "me", a read of its own (`resolve(_:)`).
    package var sender: (@Sendable (ListenTokenHolder?) -> ListenSender?)? {
        guard accountsOn else { return nil }
        return { holder in
            guard let holder, holder.owner != .household, let name = holder.accountName else { return nil }
            return ListenSender(user: name, owner: holder.owner)
        }
    }

    /// Who the holder of a token (or of a session made with one) submits
    /// for: the same rule for `/1/`'s tokens and `/2.0/`'s session keys.
    package func resolution(of holder: ListenTokenHolder?) async throws -> Resolution {
        guard let holder else { return .invalid }
        if accountsOn {
            guard holder.owner != .household, let name = holder.accountName else { return .invalid }
            return .user(name, owner: holder.owner)
        }
        guard holder.owner == .household else { return .invalid }
        guard let me = try await lists.owned(by: .household).users().first(where: \.isMe) else { return .nobody }
        return .user(me.username, owner: .household)
    }
}
