import Foundation
import VinylogueCore

/// The one Last.fm call a sync needs: a page of a user's scrobbles in
/// `[from, to]`, newest first, without the now-playing entry. The live
/// value wraps `LastFMClient.recentTracks`; tests may pass anything.
public struct RecentTracksGateway: Sendable {
    public let page: @Sendable (_ user: Username, _ from: Int64?, _ to: Int64?, _ page: Int, _ limit: Int) async throws(SourceError) -> ScrobblePage

    public init(page: @escaping @Sendable (_ user: Username, _ from: Int64?, _ to: Int64?, _ page: Int, _ limit: Int) async throws(SourceError) -> ScrobblePage) {
        self.page = page
    }
}

/// A sync in progress, as stored: the fixed bounds it downloads and the
/// next page to fetch. Its row exists only while a sync is unfinished.
public struct SyncState: Sendable, Hashable {
    /// Inclusive bounds, Unix seconds.
    public var fromInstant: Int64
    public var toInstant: Int64
    /// Pages are walked from `totalPages` down to 1; this one is next.
    public var nextPage: Int
    public var totalPages: Int
    public var pageSize: Int

    public init(fromInstant: Int64, toInstant: Int64, nextPage: Int, totalPages: Int, pageSize: Int) {
        self.fromInstant = fromInstant
        self.toInstant = toInstant
        self.nextPage = nextPage
        self.totalPages = totalPages
        self.pageSize = pageSize
    }
}

/// How far a sync has got.
public struct SyncProgress: Sendable, Hashable {
    public let pagesDone: Int
    public let totalPages: Int
    public let imported: Int
    public let duplicates: Int
}

/// What a sync did.
public struct SyncSummary: Sendable, Hashable {
    public var imported = 0
    public var duplicates = 0
    public var pages = 0
    /// Whether it continued an interrupted sync.
    public var resumed = false
}

/// Downloads a user's new scrobbles from Last.fm into the archive.
///
/// Why it cannot leave a hole: a sync fixes its bounds once, `from` = the
/// newest archived instant + 1 minus `lateWindow` and `to` = now, and records them with the
/// page count in `sync_state` ("archived" meaning scrobbles that came
/// from Last.fm: a sync or a Last.fm export). Last.fm pages newest first, so with fixed
/// bounds page N is the oldest slice; the sync walks from page N down to
/// page 1, and each page's scrobbles and the advanced page number commit in
/// one transaction. Until the last page commits, the state row says where
/// to carry on, and the next run resumes there instead of computing a new
/// `from` from the (by then partly filled) archive. Re-fetching a page
/// after a crash only meets the dedupe key.
///
/// Why `lateWindow`: Last.fm accepts scrobbles timestamped up to two weeks
/// in the past (a phone or a player that was offline submits them later),
/// so a scrobble older than the newest archived one can still appear. Each
/// sync therefore looks again at the last two weeks before the newest
/// archived scrobble; what it finds again only meets the dedupe key. The same
/// overlap picks up a late scrobble that shifted Last.fm's pages while an
/// earlier sync was walking them.
public struct ScrobbleSync: Sendable {
    public let store: any ScrobbleArchive
    public let gateway: RecentTracksGateway
    public let clock: WallClock
    public var pageSize: Int
    /// How far back before the newest archived scrobble each sync looks again.
    public var lateWindow: Int64

    /// Last.fm's limit for submitting a scrobble late: 14 days.
    public static let lastFMLateScrobbleLimit: Int64 = 14 * 86_400

    public init(store: any ScrobbleArchive, gateway: RecentTracksGateway, clock: WallClock, pageSize: Int = 200,
                lateWindow: Int64 = ScrobbleSync.lastFMLateScrobbleLimit) {
        self.store = store
        self.gateway = gateway
        self.clock = clock
        self.pageSize = pageSize
        self.lateWindow = lateWindow
    }

    /// The unfinished sync of `user`, if any.
    public func pending(for user: Username) async throws(SourceError) -> SyncState? {
        try await store.syncStart(of: user).pending
    }

    public func sync(_ user: Username, progress: @Sendable (SyncProgress) async -> Void = { _ in }) async throws(SourceError) -> SyncSummary {
        var summary = SyncSummary()
        // Only Last.fm's own scrobbles (synced or from its export) say how
        // far Last.fm has been copied: a newer Spotify or ListenBrainz import
        // must not make the sync skip anything.
        let start = try await store.syncStart(of: user)
        var state: SyncState
        var firstPage: ScrobblePage?
        if let saved = start.pending {
            state = saved
            summary.resumed = true
        } else {
            let from = start.newestFromLastFM.map { max(0, $0 + 1 - lateWindow) } ?? 0
            let to = Int64(clock.now.timeIntervalSince1970.rounded(.down))
            guard from <= to else { return summary }
            // Asked before anything is written: a user Last.fm does not know
            // (a typo) leaves no empty archive behind to shadow their charts.
            let page = try await gateway.page(user, from, to, 1, pageSize)
            firstPage = page
            state = SyncState(fromInstant: from, toInstant: to, nextPage: max(1, page.totalPages),
                              totalPages: max(1, page.totalPages), pageSize: pageSize)
            if state.totalPages > 1 { try await store.beginSync(state, of: user) }
        }

        while state.nextPage >= 1 {
            let number = state.nextPage
            let page: ScrobblePage
            if number == 1, let firstPage {
                page = firstPage
            } else {
                page = try await gateway.page(user, state.fromInstant, state.toInstant, number, state.pageSize)
            }
            // Only scrobbles inside the fixed bounds (the upstream should
            // already guarantee it).
            let scrobbles = page.scrobbles.filter { $0.instant >= state.fromInstant && $0.instant <= state.toInstant }
            state.nextPage = number - 1
            let counts = try await store.storeSyncPage(scrobbles, of: user, next: state.nextPage >= 1 ? state : nil)
            summary.imported += counts.inserted
            summary.duplicates += counts.duplicates
            summary.pages += 1
            await progress(SyncProgress(pagesDone: state.totalPages - state.nextPage, totalPages: state.totalPages,
                                        imported: summary.imported, duplicates: summary.duplicates))
        }
        return summary
    }
}
