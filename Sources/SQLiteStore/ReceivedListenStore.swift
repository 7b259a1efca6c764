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

    public func keep(_ keep: ListenKeep) async throws(ReceivedListenFailure) -> KeptListens? {
        try await write(keep.listens) { db in try Self.keep([keep], in: db)[0] }
    }

    /// Keeps `keeps` in the caller's transaction, each step of `ListenWrite`
    /// in SQLite. A forwarding job is queued with the outbox rows it gets
    /// (`SQLiteForwardingOutbox.enqueue`), and there is no fleet to tell.
    static func keep(_ keeps: [ListenKeep], in db: Database) throws -> [KeptListens?] {
        var write = ListenWrite(keeps)
        while true {
            switch write.next() {
            case .readHolders(let digests):
                var holders: [String: ListenTokenHolder] = [:]
                for digest in digests { holders[digest] = try SQLiteListenTokenStore.holder(ofToken: digest, in: db) }
                write.heard(holders: holders)
            case .readChoices(let owners):
                var choices: [ListOwner: ForwardingChoice] = [:]
                for owner in owners { choices[owner] = try SQLiteForwardingOutbox.choice(of: owner, in: db) }
                write.heard(choices: choices)
            case .queueJobs, .announce:
                break
            case .findPeople(let people):
                var ids: [String: Int64] = [:]
                for person in people { ids[person.key] = try SQLiteScrobbleStore.ensureUserID(of: person, in: db) }
                write.heard(ids: ids)
            case .store(let batches):
                for (userID, batch) in batches { _ = try SQLiteScrobbleStore.store(batch, userID: userID, in: db) }
            case .enqueue(let entries, let now):
                write.heard(queued: try entries.map { listens, owner, targets in
                    try SQLiteForwardingOutbox.enqueue(listens, of: owner, to: targets, at: now.timeIntervalSince1970, in: db)
                })
            case .finished(let answers):
                return answers
            }
        }
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
