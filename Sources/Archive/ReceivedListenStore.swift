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
}

/// Why received listens were not (all) kept.
public enum ReceivedListenFailure: Error, Equatable {
    /// Nothing was stored.
    case notKept(SourceError)
    /// Kept in the archive but not queued for forwarding: sent again, they
    /// are kept once (the duplicate rule) and queued.
    case keptNotQueued
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
        let batch = listens.map { ($0.scrobble, ScrobbleOrigin.received) }
        let time = now.timeIntervalSince1970
        let body: @Sendable (Database) throws -> Int = { db in
            _ = try SQLiteScrobbleStore.store(batch, of: user, in: db)
            guard !available.isEmpty else { return 0 }
            let targets = try SQLiteForwardingOutbox.choice(of: owner, in: db).targets.intersection(available)
            return try SQLiteForwardingOutbox.enqueue(listens, of: owner, to: targets, at: time, in: db)
        }
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

/// An archive and an outbox written one after the other (PostgreSQL's
/// archive takes each person's lock in a transaction of its own): the
/// listens are kept first, then queued; a failure between the two is
/// `ReceivedListenFailure.keptNotQueued`.
public struct ArchiveThenOutbox: ReceivedListenStore {
    let archive: any ScrobbleArchive
    /// None: nothing is forwarded.
    let outbox: (any ForwardingOutbox)?

    public init(archive: any ScrobbleArchive, outbox: (any ForwardingOutbox)?) {
        self.archive = archive
        self.outbox = outbox
    }

    public func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> Int {
        guard !listens.isEmpty else { return 0 }
        do {
            try await archive.store(listens.map(\.scrobble), of: user, origin: .received)
        } catch {
            throw .notKept(error)
        }
        guard let outbox, !available.isEmpty else { return 0 }
        do {
            let targets = try await outbox.choice(of: owner).targets.intersection(available)
            return try await outbox.enqueue(listens, of: owner, to: targets, at: now)
        } catch {
            throw .keptNotQueued
        }
    }
}
