import Foundation
import Stores
import VinylogueCore

/// Every store in one PostgreSQL database, shared by every instance of a
/// fleet, which it tells what changed (`PostgresFleetNotices`).
public struct PostgresBackend: StoreBackend {
    public let database: PostgresDatabase

    /// `database` with its tables set up (`PostgresDatabase.migrate`).
    public init(_ database: PostgresDatabase) { self.database = database }

    public var kind: StoreKind { .postgresql }
    public func isReadable() async -> Bool { await database.isReachable() }
    public var lists: any ListStore { PostgresListStore(database) }
    public var accounts: any AccountStore { PostgresAccountStore(database) }
    public var archive: any ScrobbleArchive { PostgresScrobbleStore(database) }
    public var listenTokens: any ListenTokenStore { PostgresListenTokenStore(database) }
    public var mobileSessions: any MobileSessionStore { PostgresMobileSessionStore(database) }
    public var outbox: any ForwardingOutbox { PostgresForwardingOutbox(database) }
    public var albumCovers: any AlbumCoverStore { PostgresAlbumCoverStore(database) }
    public var historyCopies: any HistoryCopyStore { PostgresHistoryCopyStore(database) }
    public var importJobs: any ImportJobStore { PostgresImportJobStore(database) }
    public var jobs: any JobQueue { PostgresJobQueue(database) }
    public var receivedListens: any ReceivedListenStore { PostgresReceivedListenStore(database) }
    public var eraser: any AccountEraser { PostgresAccountEraser(database) }
    public var digests: any DigestStore { PostgresDigestStore(database) }
    public var musicServers: any MusicServerSettings { PostgresMusicServers(database) }
    public var notices: (any FleetNotices)? { PostgresFleetNotices(database) }
}
