import Foundation
import VinylogueCore

/// The people an answer must be made for as if they did not exist: those
/// whose visibility (`Visibility`) keeps their listening from the viewer.
/// The web app decides who they are, once per request, before anything
/// of theirs is read (the server's `Audiences`), and hands the value on
/// explicitly: to `ListeningSources.concealing(_:)`, which then answers
/// for them as for a name Last.fm does not know, and to what keeps pages
/// and says "now playing", which pass them by. The command line, run by
/// the operator, conceals nobody.
public struct Concealment: Sendable, Hashable {
    /// The name keys (`Username.key`) concealed.
    public let people: Set<String>

    public init(people: Set<String>) { self.people = people }

    /// Nobody concealed: the operator's view, and any viewer's of a person
    /// who restricts no one.
    public static let nobody = Concealment(people: [])

    /// `user` alone concealed.
    public static func only(_ user: Username) -> Concealment { Concealment(people: [user.key]) }

    /// Whether `user` is concealed.
    public func conceals(_ user: Username) -> Bool {
        !people.isEmpty && people.contains(user.key)
    }

    /// Whether anyone is concealed (an answer is then neither taken from
    /// nor kept in a cache shared with other viewers).
    public var concealsAnyone: Bool { !people.isEmpty }
}
