import Foundation
import VinylogueCore

/// Session keys of the Last.fm-compatible `/2.0/` API, made by
/// `auth.getMobileSession` and presented by players as `sk`.
/// `SQLiteMobileSessionStore` and `PostgresMobileSessionStore` play it.
///
/// Only the SHA-256 digest of a session key is stored. Each session is tied
/// to its owner and to the listen token it was made with (that token's
/// digest): a session is found only while its owner still holds that
/// token, so making a new token stops every session made with the old one
/// at once, in the same statement that replaces it, on every instance.
public protocol MobileSessionStore: Sendable {
    /// Keeps the session key with `digest` for `owner`, made with the token
    /// whose digest is `tokenDigest`. Drops the owner's sessions made with
    /// other tokens (they no longer work anyway).
    func startSession(digest: String, owner: ListOwner, tokenDigest: String, at now: Date) async throws
    /// Who holds the session key with `digest`; nil when nobody does, or
    /// when its owner has made a new token since.
    func holder(ofSession digest: String) async throws -> ListenTokenHolder?
    /// How many sessions `owner` has stored (working or not yet dropped).
    func sessionCount(of owner: ListOwner) async throws -> Int
}
