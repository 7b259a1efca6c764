import Foundation
import Stores
import VinylogueCore

/// A service received listens are forwarded to, as the forwarding job
/// (`ListenForwarder`) sees it: send a batch, and say which listens it
/// already has. `LastFMForwarding` and `ListenBrainzForwarding` (the web
/// server's, over their clients) play it.
public protocol ForwardingUpstream: Sendable {
    var target: ForwardingTarget { get }
    /// The most listens one send may carry.
    var batchLimit: Int { get }
    /// Sends `listens` (in time order) with `choice`'s credentials.
    func send(_ listens: [OutboxListen], as choice: ForwardingChoice) async -> ForwardingOutcome
    /// Which of `listens` the service has already (their ids): asked before
    /// sending again listens an earlier send may have delivered.
    func arrived(_ listens: [OutboxListen], as choice: ForwardingChoice) async throws(SourceError) -> Set<Int64>
    /// Tells the service the person plays `listen` now, once, with
    /// `choice`'s credentials. Nothing is kept of it: a "now playing" that
    /// fails is over by the time it could be sent again.
    func playingNow(_ listen: ListenToForward, as choice: ForwardingChoice) async throws(SourceError)
}

/// A service whose forwarding uses a token the person enters: it can say
/// whose the token is before it is kept.
public protocol TokenCheckingUpstream: ForwardingUpstream {
    /// The name of the service's user who holds `token`; throws when the
    /// service refuses it or cannot be asked.
    func owner(ofToken token: String) async throws(SourceError) -> String
}

/// What became of one send.
public enum ForwardingOutcome: Sendable, Equatable {
    /// The service took the batch; it ignored these (by id) for good, with
    /// its reason.
    case delivered(ignored: [Int64: String])
    /// Not now: try again later (after `after` when the service said),
    /// with `reason` meanwhile. `uncertain` when the service may have
    /// received the batch all the same (a timeout, a cut connection, an
    /// answer that could not be read).
    case retry(reason: String, after: Duration?, uncertain: Bool)
    /// Never with these credentials: the person must act (`reason` says how).
    case refused(reason: String)
}
