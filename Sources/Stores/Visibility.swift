import Foundation
import VinylogueCore

/// Who may see a person's listening on this server: their charts, pages,
/// JSON, feed, share cards and the covers chosen from their archive.
/// Only accounts choose; anyone else is public, as Last.fm shows them.
public enum Visibility: String, Sendable, Hashable, CaseIterable, Codable {
    /// Anyone with the address (the default, as on Last.fm).
    case everyone
    /// Signed-in people who have the person on their list and whom the
    /// person has on theirs: friends both ways, so adding someone to a list
    /// is not enough to see them.
    case friends
    /// The person alone, signed in.
    case onlyMe = "only-me"
}

/// An account that does not show its listening to everyone: who it is,
/// what it chose, and (for `.friends`) the accounts it is friends with
/// both ways.
public struct Restriction: Sendable, Hashable {
    public let account: Account
    public let visibility: Visibility
    /// Ids of accounts on this account's list that have it on theirs.
    public let friends: Set<Int64>

    public init(account: Account, visibility: Visibility, friends: Set<Int64>) {
        self.account = account
        self.visibility = visibility
        self.friends = friends
    }
}

/// Every account's choice, as one value that answers "may this viewer see
/// this person?" without a database: the accounts that are not public
/// (usually few), by name key. Everyone not in it is public.
public struct VisibilityRules: Sendable, Hashable {
    public let restricted: [String: Restriction]

    public init(_ restrictions: [Restriction] = []) {
        restricted = Dictionary(restrictions.map { ($0.account.name.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether nobody is restricted: every person is public.
    public var isEmpty: Bool { restricted.isEmpty }

    /// Whether `user`'s listening is hidden from some viewers.
    public func isRestricted(_ user: Username) -> Bool { restricted[user.key] != nil }

    /// `account`'s choice as these rules hold it.
    public func visibility(of account: Account) -> Visibility {
        restricted[account.name.key]?.visibility ?? .everyone
    }

    /// These rules with `account`'s new choice (its friends as they were
    /// known, none if it had no restriction: the next read fills them in).
    public func applying(_ visibility: Visibility, of account: Account) -> VisibilityRules {
        var all = restricted
        if visibility == .everyone {
            all[account.name.key] = nil
        } else {
            all[account.name.key] = Restriction(account: account, visibility: visibility, friends: all[account.name.key]?.friends ?? [])
        }
        return VisibilityRules(Array(all.values))
    }

    /// Whether `viewer` (the signed-in account, nil for anyone else) may see
    /// `user`'s listening.
    public func allows(_ viewer: Account?, toSee user: Username) -> Bool {
        guard let rule = restricted[user.key] else { return true }
        guard let viewer else { return false }
        if viewer.id == rule.account.id { return true }
        switch rule.visibility {
        case .everyone: return true
        case .friends: return rule.friends.contains(viewer.id)
        case .onlyMe: return false
        }
    }
}

/// Who may see each account's listening, kept by the account store.
/// `SQLiteAccountStore` and `PostgresAccountStore` play it; the contract
/// tests run on both.
public protocol VisibilityStore: Sendable {
    /// `account`'s choice (`.everyone` until they make one).
    func visibility(of account: Account) async throws -> Visibility
    /// Saves `account`'s choice, durably.
    func setVisibility(_ visibility: Visibility, of account: Account) async throws
    /// Every account that is not public, with its friends both ways: read
    /// at start, and again after any change to a choice or a list.
    func restrictions() async throws -> [Restriction]
}

extension Restriction {
    /// Folds rows of (account id, name, choice, friend id or nil) into one
    /// restriction per account: the one reading both stores share.
    public static func folding(_ rows: [(id: Int64, name: String, visibility: String, friend: Int64?)]) -> [Restriction] {
        var order: [Int64] = []
        var found: [Int64: (Account, Visibility, Set<Int64>)] = [:]
        for row in rows {
            guard let name = Username(validating: row.name) else { continue }
            // An unknown word from a newer version hides the most.
            let visibility = Visibility(rawValue: row.visibility) ?? .onlyMe
            if found[row.id] == nil {
                order.append(row.id)
                found[row.id] = (Account(id: row.id, name: name), visibility, [])
            }
            if let friend = row.friend { found[row.id]?.2.insert(friend) }
        }
        return order.compactMap { id in found[id].map { Restriction(account: $0.0, visibility: $0.1, friends: $0.2) } }
    }

    /// The query both stores run: each non-public account, joined to each
    /// entry on its list that is an account having it on their list
    /// (`friend` is that account's id, else NULL).
    public static let query = """
        SELECT a.id, a.name, a.visibility, theirs.owner AS friend
        FROM account a
        LEFT JOIN list_entry mine ON mine.owner = a.id AND a.visibility = 'friends'
        LEFT JOIN account f ON f.name_key = mine.key
        LEFT JOIN list_entry theirs ON theirs.owner = f.id AND theirs.key = a.name_key
        WHERE a.visibility <> 'everyone'
        ORDER BY a.id
        """
}
