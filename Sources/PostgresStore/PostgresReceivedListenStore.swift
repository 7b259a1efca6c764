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
/// Keeps that arrive together share that transaction, each step one
/// statement for all of them (`PostgresListenGroups`).
public struct PostgresReceivedListenStore: ReceivedListenStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    public func keep(_ keep: ListenKeep) async throws(ReceivedListenFailure) -> KeptListens? {
        try await mapped { try await database.listenGroups.keep(keep) }
    }

    /// Any failure is "nothing was kept".
    private func mapped<T: Sendable>(_ body: () async throws -> T) async throws(ReceivedListenFailure) -> T {
        do {
            return try await body()
        } catch let error as SourceError {
            throw .notKept(error)
        } catch let error as PSQLError {
            throw .notKept(.storage(detail: error.serverInfo?[.message] ?? "the PostgreSQL database could not be reached (\(error.code))"))
        } catch {
            throw .notKept(.storage(detail: "\(error)"))
        }
    }
}
