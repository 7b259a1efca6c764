import Foundation
import VinylogueCore

/// What one instance of a fleet tells the others, so that what a person
/// sent to one shows on the pages every instance makes.
public enum FleetNotice: Sendable, Hashable, Codable {
    /// `user`'s listens changed (a player sent some): drop the pages kept of them.
    case listensChanged(user: String)
    /// `user`'s player is playing this now, until `until` (seconds since 1970).
    case playingNow(user: String, artist: String, track: String, album: String, until: Int64)
    /// Who may see `user`'s listening may have changed (their choice, a
    /// list naming them, their account deleted): read the rules again and
    /// drop the pages kept of them.
    case audienceChanged(user: String)
    /// `user`'s account was deleted: forget everything kept of them (cards
    /// drawn to disk too) and read who may see whom again.
    case erased(user: String)
    /// Said to this instance alone, never announced: the notices are heard
    /// again after a lost connection (or for the first time), so any
    /// announced meanwhile were missed.
    case listeningAgain
}

/// How the instances of a fleet tell each other `FleetNotice`s. A single
/// server (SQLite) has none: what it hears, it applies itself.
public protocol FleetNotices: Sendable {
    /// Tells every instance (this one too); a failure is only logged (the
    /// others then show their kept pages until they expire, and no "now
    /// playing").
    func announce(_ notice: FleetNotice) async
    /// Calls `heard` with each notice any instance announces, until the
    /// task is cancelled; a lost connection is made again.
    func follow(_ heard: @escaping @Sendable (FleetNotice) -> Void) async
}
