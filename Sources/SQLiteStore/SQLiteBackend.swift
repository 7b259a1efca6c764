import Foundation
import Stores
import VinylogueCore

/// Every store in one SQLite database under a data directory: a home, or
/// one instance on its own.
public struct SQLiteBackend: StoreBackend {
    public let database: ArchiveDatabase

    public init(_ database: ArchiveDatabase) { self.database = database }

    /// Opens (creating and migrating when needed) the database in
    /// `directory`, on a thread of its own: opening and migrating block,
    /// for minutes on a big archive after an update, and must not hold one
    /// of Swift's cooperative threads. Short reads asked on one of
    /// `requestThreads` run there (`ArchiveDatabase.requestThreads`).
    public static func open(directory: URL, progress: MigrationProgress? = nil,
                            requestThreads: RequestThreads? = nil) async throws(SourceError) -> SQLiteBackend {
        do {
            return try await DedicatedThread.run(named: "vinylogue.sqlite-open") {
                SQLiteBackend(try ArchiveDatabase(directory: directory, progress: progress, requestThreads: requestThreads))
            }
        } catch let error as SourceError {
            throw error
        } catch {
            throw .storage(detail: "\(directory.path): \(error)")
        }
    }

    public var kind: StoreKind { .sqlite }
    public func isReadable() async -> Bool { await database.isReadable() }
    public var lists: any ListStore { SQLiteListStore(database) }
    public var accounts: any AccountStore { SQLiteAccountStore(database) }
    public var archive: any ScrobbleArchive { SQLiteScrobbleStore(database: database) }
    public var listenTokens: any ListenTokenStore { SQLiteListenTokenStore(database) }
    public var mobileSessions: any MobileSessionStore { SQLiteMobileSessionStore(database) }
    public var outbox: any ForwardingOutbox { SQLiteForwardingOutbox(database) }
    public var albumCovers: any AlbumCoverStore { SQLiteAlbumCoverStore(database) }
    public var historyCopies: any HistoryCopyStore { SQLiteHistoryCopyStore(database) }
    public var importJobs: any ImportJobStore { SQLiteImportJobStore(database) }
    public var jobs: any JobQueue { SQLiteJobQueue(database) }
    public var receivedListens: any ReceivedListenStore { SQLiteReceivedListenStore(database) }
    public var eraser: any AccountEraser { SQLiteAccountEraser(database) }
    public var digests: any DigestStore { SQLiteDigestStore(database) }
    public var musicServers: any MusicServerSettings { SQLiteMusicServers(database) }
    public var notices: (any FleetNotices)? { nil }
}
