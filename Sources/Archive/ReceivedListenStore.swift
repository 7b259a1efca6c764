import Foundation
import GRDB
import VinylogueCore

/// Where the listens players send (`/1/`, `/2.0/`) are kept: in their
/// person's archive as `ScrobbleOrigin.received`, and in the forwarding
/// outbox once for each service that person forwards to.
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
    /// Kept in `user`'s archive but not queued for forwarding: sent again,
    /// they are kept once (the duplicate rule) and queued.
    case keptNotQueued(of: Username)
}

/// The SQLite archive and outbox, written in one transaction: a listen is
/// kept and queued together or not at all. A player's few listens share
/// their transaction and commit with others that arrive meanwhile
/// (`GroupCommit`); an import's thousand have one of their own. The
/// person's forwarding choice is read in the same transaction.
public struct SQLiteReceivedListenStore: ReceivedListenStore {
    let database: ArchiveDatabase

    public init(_ database: ArchiveDatabase) { self.database = database }

    public func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> Int {
        guard !listens.isEmpty else { return 0 }
        return try await write(listens) { db in
            try Self.keep(listens, of: ListenSender(user: user, owner: owner), forwardingAmong: available, at: now, in: db)
        }
    }

    public func keep(_ listens: [ListenToForward], sentWithToken digest: String, sender: @escaping @Sendable (ListenTokenHolder?) -> ListenSender?,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> KeptListens? {
        try await write(listens) { db in
            guard let who = sender(try SQLiteListenTokenStore.holder(ofToken: digest, in: db)) else { return nil }
            return KeptListens(sender: who, queued: listens.isEmpty ? 0 : try Self.keep(listens, of: who, forwardingAmong: available, at: now, in: db))
        }
    }

    /// Keeps and queues in the caller's transaction; returns how many outbox rows were added.
    static func keep(_ listens: [ListenToForward], of who: ListenSender, forwardingAmong available: Set<ForwardingTarget>, at now: Date,
                     in db: Database) throws -> Int {
        _ = try SQLiteScrobbleStore.store(listens.map { ($0.scrobble, ScrobbleOrigin.received) }, of: who.user, in: db)
        guard !available.isEmpty else { return 0 }
        let targets = try SQLiteForwardingOutbox.choice(of: who.owner, in: db).targets.intersection(available)
        return try SQLiteForwardingOutbox.enqueue(listens, of: who.owner, to: targets, at: now.timeIntervalSince1970, in: db)
    }

    /// A player's few listens through the group commit, an import's in a transaction of its own.
    private func write<T: Sendable>(_ listens: [ListenToForward], _ body: @escaping @Sendable (Database) throws -> T) async throws(ReceivedListenFailure) -> T {
        do {
            if listens.count <= SQLiteScrobbleStore.sharedCommitLimit {
                return try await database.groupCommit.write(body)
            }
            return try await database.writer.write(body)
        } catch {
            throw .notKept(ArchiveDatabase.failure(error))
        }
    }
}
