import Foundation
import VinylogueCore

/// A person who signed in with Last.fm: their Last.fm name is the account.
public struct Account: Sendable, Hashable {
    public let id: Int64
    /// Last.fm's spelling of the name.
    public let name: Username

    /// Their list and settings.
    public var owner: ListOwner { .account(id) }

    public init(id: Int64, name: Username) {
        self.id = id
        self.name = name
    }
}
