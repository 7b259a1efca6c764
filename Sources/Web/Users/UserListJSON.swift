import Stores
import Sync
import Foundation

/// The body of `/api/users`: `{"users":[{"me":true,"name":"ybsc"}]}`, the
/// listed users in the person's order, keys sorted.
struct UserListJSON: Encodable {
    /// One listed user.
    struct Entry: Encodable {
        /// Last.fm's spelling of the username.
        let name: String
        /// Whether this is the person using Vinylogue.
        let me: Bool
    }

    /// The listed users, in the person's order.
    let users: [Entry]

    init(_ users: [ListedUser]) {
        self.users = users.map { Entry(name: $0.name, me: $0.isMe) }
    }

    /// The compact JSON, keys sorted (the bytes JSONSerialization wrote).
    func data() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}
