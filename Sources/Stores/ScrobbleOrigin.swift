import Foundation
import VinylogueCore

/// Where an archived scrobble came from.
public enum ScrobbleOrigin: Int, Sendable, Codable, CaseIterable {
    case lastFMSync = 1
    case lastFMExport = 2
    case listenBrainz = 3
    case spotify = 4
    case demo = 5
    case maloja = 6
    /// A portable player's `.scrobbler.log` (Rockbox).
    case scrobblerLog = 7
    /// Received from a player through the ListenBrainz-compatible `/1/` API.
    case received = 8
    /// Copied from ListenBrainz's public listens by a sync of an `lb:` user.
    case listenBrainzSync = 9

    /// The origin a sync of `user` stores its rows under: Last.fm's sync
    /// for Last.fm users, ListenBrainz's for `lb:` users.
    public static func sync(of user: Username) -> ScrobbleOrigin {
        user.service == .listenBrainz ? .listenBrainzSync : .lastFMSync
    }

    /// The origins whose newest row says how far `user`'s own service has
    /// been copied (its sync and its export), where the next sync starts:
    /// a newer play from anywhere else must not make a sync skip anything.
    public static func copies(of user: Username) -> [ScrobbleOrigin] {
        user.service == .listenBrainz ? [.listenBrainzSync, .listenBrainz] : [.lastFMSync, .lastFMExport]
    }
}
