import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// The listens players send, kept in PostgreSQL in one transaction: the
/// token's holder read, the person's lock taken, the listens stored by the
/// duplicate rule with their kept weekly charts, the forwarding choice
/// read and the outbox rows written, so a listen is kept and queued
/// together or not at all, as on SQLite (`SQLiteReceivedListenStore`).
/// Before, these were separate transactions: a failure between keeping
/// and queuing told the player to send again listens that were stored.
public struct PostgresReceivedListenStore: ReceivedListenStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    public func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> Int {
        guard !listens.isEmpty else { return 0 }
        return try await transaction { connection, logger in
            try await Self.keep(listens, of: ListenSender(user: user, owner: owner), forwardingAmong: available, at: now, connection, logger)
        }
    }

    public func keep(_ listens: [ListenToForward], sentWithToken digest: String, sender: @escaping @Sendable (ListenTokenHolder?) -> ListenSender?,
                     forwardingAmong available: Set<ForwardingTarget>, at now: Date) async throws(ReceivedListenFailure) -> KeptListens? {
        try await transaction { connection, logger in
            // Read in the transaction that keeps the listens: a token
            // replaced before it commits stores nothing.
            guard let who = sender(try await PostgresListenTokenStore.holder(ofToken: digest, connection, logger)) else { return nil }
            let queued = listens.isEmpty ? 0 : try await Self.keep(listens, of: who, forwardingAmong: available, at: now, connection, logger)
            return KeptListens(sender: who, queued: queued)
        }
    }

    /// Keeps and queues in the caller's transaction; returns how many outbox rows were added.
    static func keep(_ listens: [ListenToForward], of who: ListenSender, forwardingAmong available: Set<ForwardingTarget>, at now: Date,
                     _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        let id = try await PostgresScrobbleStore.lockedUserID(of: who.user, connection, logger)
        _ = try await PostgresScrobbleStore.storeByRule(listens.map { ($0.scrobble, ScrobbleOrigin.received) }, userID: id, connection, logger)
        guard !available.isEmpty else { return 0 }
        let targets = try await PostgresForwardingOutbox.choice(of: who.owner, connection, logger).targets.intersection(available)
        return try await PostgresForwardingOutbox.enqueue(listens, of: who.owner, to: targets, at: now, connection, logger)
    }

    /// Runs `body` in one transaction; any failure is "nothing was kept".
    private func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T)
        async throws(ReceivedListenFailure) -> T {
        let logger = database.logger
        do {
            return try await database.client.withTransaction(logger: logger) { connection in try await body(connection, logger) }
        } catch let error as SourceError {
            throw .notKept(error)
        } catch let error as PSQLError {
            throw .notKept(.storage(detail: error.serverInfo?[.message] ?? "the PostgreSQL database could not be reached (\(error.code))"))
        } catch {
            throw .notKept(.storage(detail: "\(error)"))
        }
    }
}
