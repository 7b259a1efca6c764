import Foundation
import Stores
import GRDB
import VinylogueCore

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
