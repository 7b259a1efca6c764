import Foundation
import VinylogueCore

/// Where the listens players send (`/1/`, `/2.0/`) are kept: in their
/// person's archive as `ScrobbleOrigin.received`, and in the forwarding
/// outbox once for each service that person forwards to. A store a fleet
/// shares also announces `FleetNotice.listensChanged` for each person whose
/// listens it kept, in the same transaction: every instance hears it when
/// they are stored, and none if they are not.
public protocol ReceivedListenStore: Sendable {
    /// Keeps `listens` in `user`'s archive (the duplicate rule applies, the
    /// kept weekly charts follow) and queues them for each service among
    /// `available` that `owner` forwards to now (`ForwardingChoice.targets`);
    /// returns how many outbox rows were added.
    func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner,
              forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> Int

    /// The same for listens sent with a listen token, whose holder is read
    /// with them: `sender` says from the holder (nil: no such token) whom
    /// they are for, or nil when they may not be kept, and then nothing is
    /// stored and nil is returned. On SQLite the token, the listens and
    /// the outbox are one transaction: a token replaced before it commits
    /// stores nothing.
    func keep(_ listens: [ListenToForward], sentWithToken digest: String, sender: @escaping @Sendable (ListenTokenHolder?) -> ListenSender?,
              forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> KeptListens?
}

/// Listens kept for a token's holder: whom they were for, and how many
/// outbox rows they added.
public struct KeptListens: Sendable, Hashable {
    public let sender: ListenSender
    public let queued: Int

    public init(sender: ListenSender, queued: Int) {
        self.sender = sender
        self.queued = queued
    }
}

/// Whom listens sent with a token are for: the archive user they go to
/// and the owner whose forwarding choices apply.
public struct ListenSender: Sendable, Hashable {
    public let user: Username
    public let owner: ListOwner

    public init(user: Username, owner: ListOwner) {
        self.user = user
        self.owner = owner
    }
}

/// Why received listens were not (all) kept.
public enum ReceivedListenFailure: Error, Equatable {
    /// Nothing was stored.
    case notKept(SourceError)
}
