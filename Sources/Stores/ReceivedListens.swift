import Foundation
import VinylogueCore

/// Where the listens players send (`/1/`, `/2.0/`) are kept: in their
/// person's archive as `ScrobbleOrigin.received`, and in the forwarding
/// outbox once for each service that person forwards to. A store a fleet
/// shares also announces `FleetNotice.listensChanged` for each person whose
/// listens it kept, in the same transaction: every instance hears it when
/// they are stored, and none if they are not.
public protocol ReceivedListenStore: Sendable {
    /// Keeps `keep`'s listens in their person's archive (the duplicate rule
    /// applies, the kept weekly charts follow) and queues them for each
    /// service among `keep.available` that the sender's owner forwards to
    /// now (`ForwardingChoice.targets`), in one transaction, in the order
    /// `ListenWrite` states. Returns whom they were for and how many outbox
    /// rows they added, or nil when the token's holder may not send them
    /// (then nothing is stored): a token replaced before the transaction
    /// commits stores nothing.
    func keep(_ keep: ListenKeep) async throws(ReceivedListenFailure) -> KeptListens?
}

extension ReceivedListenStore {
    /// Keeps `listens` in `user`'s archive and queues them for each service
    /// among `available` that `owner` forwards to now; returns how many
    /// outbox rows were added.
    public func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> Int {
        guard !listens.isEmpty else { return 0 }
        return try await keep(ListenKeep(listens, from: .known(ListenSender(user: user, owner: owner)), forwardingAmong: available, at: now))?
            .queued ?? 0
    }

    /// The same for listens sent with a listen token, whose holder is read
    /// with them: `sender` says from the holder (nil: no such token) whom
    /// they are for, or nil when they may not be kept, and then nothing is
    /// stored and nil is returned.
    public func keep(_ listens: [ListenToForward], sentWithToken digest: String, sender: @escaping @Sendable (ListenTokenHolder?) -> ListenSender?,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> KeptListens? {
        try await keep(ListenKeep(listens, from: .token(digest: digest, sender: sender), forwardingAmong: available, at: now))
    }
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
