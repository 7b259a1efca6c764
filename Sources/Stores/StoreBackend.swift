import Foundation
import VinylogueCore

/// Which database a `StoreBackend` keeps everything in.
public enum StoreKind: String, Sendable {
    case sqlite
    case postgresql
}

/// The database Vinylogue keeps everything in: SQLite under a data
/// directory (`SQLiteBackend`), or one PostgreSQL database a fleet shares
/// (`PostgresBackend`). The composition root chooses it once; everything
/// else is handed the stores it needs from it and never learns which it is.
///
/// Writes that must change several stores all or nothing are its units of
/// work: `receivedListens` keeps a player's listens in the archive (the
/// duplicate rule, the kept charts) and queues them for forwarding in one
/// transaction, on both databases alike.
public protocol StoreBackend: Sendable {
    var kind: StoreKind { get }
    /// Whether a trivial read answers now (the caller bounds the wait).
    func isReadable() async -> Bool
    /// The household's list and settings; `owned(by:)` gives an account's.
    var lists: any ListStore { get }
    var accounts: any AccountStore { get }
    var archive: any ScrobbleArchive { get }
    var listenTokens: any ListenTokenStore { get }
    var mobileSessions: any MobileSessionStore { get }
    var outbox: any ForwardingOutbox { get }
    var albumCovers: any AlbumCoverStore { get }
    /// History copies as durable jobs.
    var historyCopies: any HistoryCopyStore { get }
    /// Uploaded exports.
    var importJobs: any ImportJobStore { get }
    /// Every job that outlives a request.
    var jobs: any JobQueue { get }
    /// Listens a player sent, kept and queued in one transaction.
    var receivedListens: any ReceivedListenStore { get }
    /// Deletes an account and everything of it, in one transaction.
    var eraser: any AccountEraser { get }
    /// Weekly digest subscriptions and their send queue.
    var digests: any DigestStore { get }
    /// People's own music servers (`MusicServerSettings`).
    var musicServers: any MusicServerSettings { get }
    /// How instances tell each other what changed; nil with one process
    /// per data directory.
    var notices: (any FleetNotices)? { get }
}

extension StoreBackend {
    /// Whose listening `owner` speaks for: the account's name, or the
    /// household's "me"; nil when there is none (or it cannot be read).
    public func person(of owner: ListOwner) async -> Username? {
        if owner == .household { return try? await lists.owned(by: .household).users().first(where: \.isMe)?.username }
        return try? await accounts.account(id: owner.id)?.name
    }
}
