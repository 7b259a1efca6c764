import Foundation
import VinylogueCore

/// One owner's users list, its order, and settings: what the web app keeps
/// for a household or an account. `SQLiteListStore` (GRDB, the embedded
/// default) and `PostgresListStore` play it; one contract test suite runs
/// against both.
///
/// Every change is one transaction; positions stay dense (0, 1, 2, …) after
/// each change. A store sees only its owner's rows; `owned(by:)` gives
/// another owner's on the same database.
public protocol ListStore: Sendable {
    /// Whose list and settings this store reads and writes.
    var owner: ListOwner { get }
    /// The same database, `owner`'s list and settings.
    func owned(by owner: ListOwner) -> Self

    /// Everyone, in the person's order.
    func users() async throws -> [ListedUser]
    func user(_ name: Username) async throws -> ListedUser?
    /// Whether `name` is on anyone's list, whoever owns this store.
    func isListedByAnyone(_ name: Username) async throws -> Bool
    /// Adds `name` at the end (as "me" when the list is empty). Returns
    /// false when the user is already listed.
    @discardableResult func add(_ name: Username) async throws -> Bool
    /// Adds every name not already listed, in the given order, after the
    /// existing users. Returns the names added.
    func addAll(_ names: [Username]) async throws -> [Username]
    /// Removes `name`; when it was "me", the first remaining user becomes "me".
    func remove(_ name: Username) async throws
    /// Moves `name` up (-1) or down (+1) one place.
    func move(_ name: Username, by offset: Int) async throws
    /// Puts the users in `order`; anyone missing keeps their relative place
    /// after those named.
    func reorder(_ order: [Username]) async throws
    /// Replaces `old` by `new` in the same place (a corrected spelling).
    /// Returns false when `new` is already listed as someone else.
    func rename(_ old: Username, to new: Username) async throws -> Bool
    /// Marks `name` as "me".
    func setMe(_ name: Username) async throws

    func settings() async throws -> Settings
    func save(_ settings: Settings) async throws
}

/// Accounts (people who signed in with Last.fm) and their sign-in sessions.
/// `SQLiteAccountStore` and `PostgresAccountStore` play it.
///
/// Sessions are found by the SHA-256 digest of the browser's token, never
/// by the token itself; Last.fm's session key for an account is stored
/// here and never leaves the server.
public protocol AccountStore: VisibilityStore {
    /// Records a completed Last.fm sign-in for `name`: creates the account
    /// on the first one, else updates its spelling and Last.fm session key.
    /// Returns the account and whether it is new.
    func signedIn(_ name: Username, lastFMSessionKey: String, at now: Date) async throws -> (account: Account, isNew: Bool)
    /// Starts a session for `account`, valid until `expires`; `replacing`
    /// (the digest of the session the browser held before, if any) ends in
    /// the same transaction, and expired sessions are cleared.
    func startSession(digest: String, for account: Account, at now: Date, expires: Date, replacing old: String?) async throws
    /// The account whose live session has `digest`; nil when there is none
    /// or it has expired.
    func account(forSession digest: String, at now: Date) async throws -> Account?
    /// Ends the session with `digest` (signing out).
    func endSession(digest: String) async throws
    /// How many sessions are stored (live or not yet cleared).
    func sessionCount() async throws -> Int
    /// How many accounts exist.
    func accountCount() async throws -> Int
    /// The account of `name` (any case), if one signed in here.
    func account(named name: Username) async throws -> Account?
    /// The account with `id`, if it still exists.
    func account(id: Int64) async throws -> Account?
}
