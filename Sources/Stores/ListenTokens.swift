import Foundation
import VinylogueCore

/// Whose listen-submission token a digest is: the owner it was made for,
/// and, for an account, its name (the archive user its listens go to).
public struct ListenTokenHolder: Sendable, Hashable {
    public let owner: ListOwner
    /// The account's Last.fm name; nil for the household.
    public let accountName: Username?

    public init(owner: ListOwner, accountName: Username?) {
        self.owner = owner
        self.accountName = accountName
    }

    /// From a stored owner id (0: the household) and account name.
    public init(ownerID: Int64, accountName: String?) {
        self.init(owner: ownerID == 0 ? .household : .account(ownerID), accountName: accountName.flatMap(Username.init(validating:)))
    }
}

/// Listen-submission tokens (the ListenBrainz-compatible `/1/` API's
/// `Authorization: Token …`): at most one per owner, the household's or an
/// account's. `SQLiteListenTokenStore` and `PostgresListenTokenStore` play it.
///
/// Only the SHA-256 digest of a token is stored, never the token: a copy of
/// the database cannot be used to submit listens. Beside it, the token's
/// sealed `auth.getMobileSession` verifier (see `MobileSessionStore`): what
/// the Last.fm-compatible API needs to check a player's `authToken`,
/// encrypted with a key that is not in the database.
public protocol ListenTokenStore: Sendable {
    /// Makes `digest` `owner`'s token, with its sealed mobile sign-in
    /// verifier, replacing the one it had in the same statement, so the old
    /// token (and every session made with it) stops working at once.
    func replaceToken(of owner: ListOwner, digest: String, mobileVerifier: String?, at now: Date) async throws
    /// Who holds the token with `digest`; nil when nobody does.
    func holder(ofToken digest: String) async throws -> ListenTokenHolder?
    /// When `owner`'s token was made; nil when it has none.
    func tokenMade(by owner: ListOwner) async throws -> Date?
    /// The token `owner` holds now, for a mobile sign-in: its digest and
    /// its sealed verifier; nil when it has none.
    func mobileVerifier(of owner: ListOwner) async throws -> MobileVerifier?
    /// The token of the account named `name` (in any case), for a mobile
    /// sign-in; nil when there is no such account or it has no token.
    func mobileVerifier(ofAccountNamed name: Username) async throws -> MobileVerifier?
}

extension ListenTokenStore {
    /// A token without a mobile sign-in verifier (its owner signs players
    /// in only with the token itself as `password`).
    public func replaceToken(of owner: ListOwner, digest: String, at now: Date) async throws {
        try await replaceToken(of: owner, digest: digest, mobileVerifier: nil, at: now)
    }
}

/// A listen token as `auth.getMobileSession` needs it: whose it is, its
/// digest (a session is tied to it), and its sealed verifier.
public struct MobileVerifier: Sendable, Hashable {
    public let holder: ListenTokenHolder
    public let tokenDigest: String
    /// Sealed by the server (`MobileSignIn`); nil for a token made before
    /// mobile sign-in existed.
    public let sealed: String?

    public init(holder: ListenTokenHolder, tokenDigest: String, sealed: String?) {
        self.holder = holder
        self.tokenDigest = tokenDigest
        self.sealed = sealed
    }
}
