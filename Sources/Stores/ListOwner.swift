import Foundation
import VinylogueCore

/// Whose list and settings: the household's (one shared list, when nobody
/// signs in) or one account's.
public struct ListOwner: Sendable, Hashable, Codable {
    /// 0 for the household; an account's id otherwise (ids start at 1).
    public let id: Int64

    /// The one list of a server where nobody signs in.
    public static let household = ListOwner(id: 0)

    public static func account(_ id: Int64) -> ListOwner { ListOwner(id: id) }

    package init(id: Int64) { self.id = id }
}

/// One person on a users list.
public struct ListedUser: Sendable, Hashable, Codable {
    /// Whose list this entry is on; with `key`, the primary key (owner first,
    /// so every person's rows are one range).
    public var owner: Int64
    /// The case-folded name.
    public var key: String
    /// Last.fm's canonical spelling.
    public var name: String
    /// Place in the person's own order, from 0.
    public var position: Int
    /// Whether this is the person running the app ("me").
    public var isMe: Bool

    public var username: Username { (try? Username(name)) ?? Username(validating: key)! }

    public init(owner: Int64, key: String, name: String, position: Int, isMe: Bool) {
        self.owner = owner
        self.key = key
        self.name = name
        self.position = position
        self.isMe = isMe
    }
}

/// The app's settings.
public struct Settings: Sendable, Hashable {
    public var filter: PlayCountFilter {
        didSet { fingerprint = Self.fingerprint(filter, timeZoneIdentifier) }
    }
    /// An IANA time zone name; `nil` means the server's own zone.
    public var timeZoneIdentifier: String? {
        didSet {
            timeZone = Self.zone(timeZoneIdentifier)
            fingerprint = Self.fingerprint(filter, timeZoneIdentifier)
        }
    }
    /// A short string that changes whenever the settings do (pages are kept
    /// under it), made once.
    public private(set) var fingerprint: String
    /// The zone `timeZoneIdentifier` names, made once (every page asks for
    /// it, and making a `TimeZone` showed in the warm page's profile).
    public private(set) var timeZone: TimeZone

    public init(filter: PlayCountFilter = .off, timeZoneIdentifier: String? = nil) {
        self.filter = filter
        self.timeZoneIdentifier = timeZoneIdentifier
        timeZone = Self.zone(timeZoneIdentifier)
        fingerprint = Self.fingerprint(filter, timeZoneIdentifier)
    }

    static func fingerprint(_ filter: PlayCountFilter, _ zone: String?) -> String {
        "\(filter.threshold)|\(zone ?? "")"
    }

    static func zone(_ identifier: String?) -> TimeZone {
        identifier.flatMap(TimeZone.init(identifier:)) ?? .current
    }
}
