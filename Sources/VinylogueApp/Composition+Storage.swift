import Foundation
import LastFM
import PostgresStore
import SQLiteStore
import Stores
import Artwork
import VinylogueCore

/// The database chosen once, with what the Last.fm client and the art
/// store keep in it.
public struct OpenedStorage: Sendable {
    public let backend: any StoreBackend
    /// Where Last.fm's answers are kept: the fleet's with PostgreSQL.
    let responseCache: any LastFMResponseCache
    /// The fleet's one Last.fm request budget; nil for one process's own.
    let permits: (any LastFMRequestPermits)?
    /// Album palettes shared by a fleet; nil to keep them per instance.
    let palettes: (any PaletteStore)?
}

extension Composition {
    /// The one choice of database: PostgreSQL when one is configured (its
    /// tables set up, the fleet's request budget prepared), else SQLite in
    /// the data directory, opened on a thread of its own.
    public func openStorage(dataDir: String? = nil) async throws -> OpenedStorage {
        if let postgres = try await migratedPostgres() {
            let permits = PostgresRequestPermits(postgres, limit: configuration.lastFM.requestsPerSecond)
            try await permits.prepare()
            return OpenedStorage(backend: PostgresBackend(postgres),
                                 responseCache: PostgresResponseCache(postgres, coordination: postgresLocks ?? postgres, clock: clock),
                                 permits: permits, palettes: PostgresPaletteStore(postgres))
        }
        let sqlite = try await SQLiteBackend.open(directory: dataDirectory(dataDir), progress: migrationProgress,
                                                  requestThreads: requestThreads)
        return OpenedStorage(backend: sqlite, responseCache: SQLiteResponseCache(sqlite.database, clock: clock), permits: nil, palettes: nil)
    }

    /// The configured PostgreSQL database with its tables set up, or nil
    /// when none is configured. The pool keeps retrying an unreachable
    /// server; this waits 15 s for its first answer at most. Migrating
    /// then takes as long as it takes (counting the weekly charts of a big
    /// archive takes minutes), saying how far it is.
    func migratedPostgres() async throws(DatabaseUnavailable) -> PostgresDatabase? {
        guard let postgres else { return nil }
        let reaching = Task { await postgres.isReachable() }
        switch await reaching.result(within: .seconds(15)) {
        case .success(true): break
        case .success(false):
            throw DatabaseUnavailable(reason: "it refused the connection.")
        case nil:
            reaching.cancel()
            throw DatabaseUnavailable(reason: "it could not be reached within 15 seconds.")
        }
        do {
            try await postgres.migrate(progress: migrationProgress)
        } catch {
            throw DatabaseUnavailable(reason: "its tables could not be set up.")
        }
        return postgres
    }
}
