import Foundation
import Stores
import VinylogueCore

/// The one Last.fm call a sync needs: a page of a user's scrobbles in
/// `[from, to]`, newest first, without the now-playing entry. The live
/// value wraps `LastFMClient.recentTracks`; tests may pass anything.
///
/// As a `SyncUpstream` it walks Last.fm's pages of fixed bounds from the
/// last (oldest) to page 1.
public struct RecentTracksGateway: SyncUpstream {
    public let page: @Sendable (_ user: Username, _ from: Int64?, _ to: Int64?, _ page: Int, _ limit: Int) async throws(SourceError) -> ScrobblePage

    public init(page: @escaping @Sendable (_ user: Username, _ from: Int64?, _ to: Int64?, _ page: Int, _ limit: Int) async throws(SourceError) -> ScrobblePage) {
        self.page = page
    }

    /// Asks for page 1 (which also says how many pages there are) and
    /// keeps it for the end of the walk.
    public func open(_ user: Username, from: Int64, to: Int64, pageSize: Int) async throws(SourceError) -> SyncOpening {
        let first = try await page(user, from, to, 1, pageSize)
        let total = max(1, first.totalPages)
        let state = SyncState(fromInstant: from, toInstant: to, nextPage: total, totalPages: total, pageSize: pageSize)
        var last = state
        last.nextPage = 1
        return SyncOpening(state: state, prefetched: (last, SyncSlice(scrobbles: first.scrobbles, next: nil)), expectedScrobbles: first.total)
    }

    public func slice(_ user: Username, at state: SyncState) async throws(SourceError) -> SyncSlice {
        let fetched = try await page(user, state.fromInstant, state.toInstant, state.nextPage, state.pageSize)
        var next = state
        next.nextPage -= 1
        return SyncSlice(scrobbles: fetched.scrobbles, next: next.nextPage >= 1 ? next : nil)
    }
}

/// One service's side of a sync (`ScrobbleSync`): how its history within
/// fixed bounds is asked for, one slice at a time, each slice naming the
/// `SyncState` after it. Last.fm's is `RecentTracksGateway` (pages of
/// fixed bounds); ListenBrainz's is `ListenBrainzHistory` (windows below a
/// moving upper bound).
public protocol SyncUpstream: Sendable {
    /// Starts a walk of `[from, to]` for `user`: asks the service once
    /// (before anything is written, so a misspelt name stores nothing) and
    /// returns the walk's first state, with the slice that ask fetched and
    /// the state it belongs to.
    func open(_ user: Username, from: Int64, to: Int64, pageSize: Int) async throws(SourceError) -> SyncOpening
    /// The slice `state` names, and the state after it (nil: the walk is done).
    func slice(_ user: Username, at state: SyncState) async throws(SourceError) -> SyncSlice
}

/// A slice of a walk: its scrobbles and where the walk goes next.
public struct SyncSlice: Sendable, Hashable {
    public var scrobbles: [Scrobble]
    /// The state after this slice; nil when it was the last.
    public var next: SyncState?

    public init(scrobbles: [Scrobble], next: SyncState?) {
        self.scrobbles = scrobbles
        self.next = next
    }
}

/// How a walk starts (`SyncUpstream.open`).
public struct SyncOpening: Sendable {
    /// The walk's first state.
    public var state: SyncState
    /// A slice already fetched while opening, and the state it is the slice of.
    public var prefetched: (at: SyncState, slice: SyncSlice)?
    /// How many scrobbles the service says the walk holds (nil: it does not say).
    public var expectedScrobbles: Int?

    public init(state: SyncState, prefetched: (at: SyncState, slice: SyncSlice)?, expectedScrobbles: Int? = nil) {
        self.state = state
        self.prefetched = prefetched
        self.expectedScrobbles = expectedScrobbles
    }
}

/// ListenBrainz's public listens as a `SyncUpstream`: newest first, in
/// windows of `pageSize` (at most 1,000) below an upper bound that moves
/// down the fixed range.
///
/// Each window asks for the listens strictly between `fromInstant - 1`
/// (at least 0) and `toInstant + 1` (ListenBrainz's `min_ts` and `max_ts` are exclusive),
/// the newest first. A full window moves `toInstant` down to its oldest
/// listen, *inclusive*: listens sharing that second on both sides of the
/// cut are asked for again, and only meet the duplicate rule. A window
/// with fewer listens than asked for is the last. The state records
/// `totalPages` 0 (the length is unknown) and counts windows in `nextPage`.
public struct ListenBrainzHistory: SyncUpstream {
    /// Up to `count` of a user's listens with `listened_at` strictly
    /// between `minTs` and `maxTs`, newest first, and how many ListenBrainz
    /// sent (listens without names are left out of the first). `user` is
    /// ListenBrainz's own name (`Username.serviceName`). The live value
    /// wraps `ListenBrainzClient.listens`.
    public let window: @Sendable (_ user: String, _ minTs: Int64, _ maxTs: Int64, _ count: Int) async throws(SourceError) -> (listens: [Scrobble], sent: Int)

    public init(window: @escaping @Sendable (_ user: String, _ minTs: Int64, _ maxTs: Int64, _ count: Int) async throws(SourceError) -> (listens: [Scrobble], sent: Int)) {
        self.window = window
    }

    public func open(_ user: Username, from: Int64, to: Int64, pageSize: Int) async throws(SourceError) -> SyncOpening {
        let state = SyncState(fromInstant: from, toInstant: to, nextPage: 1, totalPages: 0, pageSize: min(pageSize, 1000))
        return SyncOpening(state: state, prefetched: (state, try await slice(user, at: state)))
    }

    public func slice(_ user: Username, at state: SyncState) async throws(SourceError) -> SyncSlice {
        // ListenBrainz refuses a negative bound; nothing lies at second 0.
        let answer = try await window(user.serviceName, max(0, state.fromInstant.minus(1)), state.toInstant.plus(1), state.pageSize)
        guard answer.sent >= state.pageSize, let oldest = answer.listens.map(\.instant).min() else {
            return SyncSlice(scrobbles: answer.listens, next: nil)
        }
        var next = state
        // A window all in one second cannot move by re-asking that second.
        next.toInstant = oldest < state.toInstant ? oldest : oldest.minus(1)
        next.nextPage += 1
        return SyncSlice(scrobbles: answer.listens, next: next.toInstant >= state.fromInstant ? next : nil)
    }
}

/// How far a sync has got.
public struct SyncProgress: Sendable, Hashable {
    /// Pages (windows) stored, in this run and any it resumed.
    public let pagesDone: Int
    /// 0 when the service does not say (ListenBrainz).
    public let totalPages: Int
    public let imported: Int
    public let duplicates: Int
    /// The share of this run's range that is done, 0...1: by pages, or by
    /// time when the number of pages is unknown.
    public let fraction: Double
    /// The oldest instant the walk has reached, for walks that go back in
    /// time (ListenBrainz's); nil for Last.fm's page walks.
    public let reachedBack: Int64?
    /// How many scrobbles the service said this run's walk holds, when it
    /// said so as the run began (a resumed run does not ask again).
    public var expected: Int? = nil
}

/// What a sync did.
public struct SyncSummary: Sendable, Hashable {
    public var imported = 0
    public var duplicates = 0
    public var pages = 0
    /// Whether it continued an interrupted sync.
    public var resumed = false
}

/// Downloads a user's new scrobbles from their service (Last.fm, or
/// ListenBrainz for an `lb:` user, through a `SyncUpstream`) into the archive.
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
    public let store: any SyncLog
    public let upstream: any SyncUpstream
    public let clock: WallClock
    public var pageSize: Int
    /// How far back before the newest archived scrobble each sync looks again.
    public var lateWindow: Int64

    /// Last.fm's limit for submitting a scrobble late: 14 days.
    public static let lastFMLateScrobbleLimit: Int64 = 14 * 86_400

    /// A Last.fm sync (pages of 200).
    public init(store: any SyncLog, gateway: RecentTracksGateway, clock: WallClock, pageSize: Int = 200,
                lateWindow: Int64 = ScrobbleSync.lastFMLateScrobbleLimit) {
        self.init(store: store, upstream: gateway, clock: clock, pageSize: pageSize, lateWindow: lateWindow)
    }

    /// A sync from any service. ListenBrainz takes listens of any age (an
    /// import), but players that were offline send within days, so the
    /// same 14 days are looked at again; `pageSize` up to 1,000 there.
    public init(store: any SyncLog, upstream: any SyncUpstream, clock: WallClock, pageSize: Int = 200,
                lateWindow: Int64 = ScrobbleSync.lastFMLateScrobbleLimit) {
        self.store = store
        self.upstream = upstream
        self.clock = clock
        self.pageSize = pageSize
        self.lateWindow = lateWindow
    }

    /// The unfinished sync of `user`, if any.
    public func pending(for user: Username) async throws(SourceError) -> SyncState? {
        try await store.syncStart(of: user).pending
    }

    /// Copies what is new of `user` (or resumes the unfinished run). With a
    /// `fence` (a claimed history copy's), every write checks the claim in
    /// its own transaction, so a copy cancelled meanwhile stores nothing more.
    public func sync(_ user: Username, fence: JobFence? = nil,
                     progress: @Sendable (SyncProgress) async -> Void = { _ in }) async throws(SourceError) -> SyncSummary {
        var summary = SyncSummary()
        // Only the service's own scrobbles (synced or from its export) say
        // how far it has been copied: a newer Spotify import or a listen
        // received from a player must not make the sync skip anything.
        let start = try await store.syncStart(of: user)
        var state: SyncState
        var prefetched: (at: SyncState, slice: SyncSlice)?
        var expected: Int?
        if let saved = start.pending {
            state = saved
            summary.resumed = true
        } else {
            let from = start.newestFromLastFM.map { max(0, $0 + 1 - lateWindow) } ?? 0
            let to = Int64(clock.now.timeIntervalSince1970.rounded(.down))
            guard from <= to else { return summary }
            // Asked before anything is written: a user the service does not
            // know (a typo) leaves no empty archive behind to shadow their charts.
            let opening = try await upstream.open(user, from: from, to: to, pageSize: pageSize)
            state = opening.state
            prefetched = opening.prefetched
            expected = opening.expectedScrobbles
            let whole = prefetched.map { $0.at == state && $0.slice.next == nil } ?? false
            if !whole { try await store.beginSync(state, of: user, fence: fence) }
        }

        let walk = state
        var current: SyncState? = state
        while let here = current {
            // A cancelled copy (its claim lost, the server stopping) stops
            // between pages; the stored state resumes it.
            if Task.isCancelled { throw .storage(detail: "the copy of \(user.value) was stopped; it resumes where it stopped") }
            let slice: SyncSlice
            if let ready = prefetched, ready.at == here {
                slice = ready.slice
                prefetched = nil
            } else {
                slice = try await upstream.slice(user, at: here)
            }
            // Only scrobbles inside the bounds (the upstream should already
            // guarantee it).
            let scrobbles = slice.scrobbles.filter { $0.instant >= here.fromInstant && $0.instant <= here.toInstant }
            let counts = try await store.storeSyncPage(scrobbles, of: user, next: slice.next, fence: fence)
            summary.imported += counts.inserted
            summary.duplicates += counts.duplicates
            summary.pages += 1
            var step = Self.progress(walk: walk, after: slice.next, summary: summary)
            step.expected = expected
            await progress(step)
            current = slice.next
        }
        return summary
    }

    static func progress(walk: SyncState, after next: SyncState?, summary: SyncSummary) -> SyncProgress {
        if walk.totalPages > 0 {
            let done = walk.totalPages - (next?.nextPage ?? 0)
            return SyncProgress(pagesDone: done, totalPages: walk.totalPages, imported: summary.imported, duplicates: summary.duplicates,
                                fraction: Double(done) / Double(walk.totalPages), reachedBack: nil)
        }
        let span = Double(max(1, walk.toInstant - walk.fromInstant))
        let reached = next?.toInstant ?? walk.fromInstant
        return SyncProgress(pagesDone: (next?.nextPage ?? walk.nextPage + summary.pages) - 1, totalPages: 0,
                            imported: summary.imported, duplicates: summary.duplicates,
                            fraction: min(1, max(0, Double(walk.toInstant - reached) / span)), reachedBack: reached)
    }
}
