import HTTPServing
import Stores
import Sync
import Foundation
import VinylogueCore

/// Why received listens could not be kept (each API says it its own way).
package enum ReceivedListensFailure: Error {
    /// The archive refused them; nothing was stored.
    case storage(String)
}

/// Listens players send through `/1/` and `/2.0/`: kept and queued in one
/// transaction (`ReceivedListenStore`, which tells the other instances of
/// a fleet as it commits), then made known to the pages kept here and to
/// the forwarding sender.
package struct ReceivedListens: Sendable {
    package let store: any ReceivedListenStore
    package let forwarding: ListenForwarding?
    package let notices: (any FleetNotices)?
    /// Where it is announced that a person's listens changed.
    package let changes: ListeningChanges
    package let nowPlaying: NowPlaying
    package let clock: WallClock

    package init(store: any ReceivedListenStore, forwarding: ListenForwarding?, notices: (any FleetNotices)?, changes: ListeningChanges, nowPlaying: NowPlaying, clock: WallClock) {
        self.store = store
        self.forwarding = forwarding
        self.notices = notices
        self.changes = changes
        self.nowPlaying = nowPlaying
        self.clock = clock
    }

    /// Keeps listens a player sent (through `/1/` or `/2.0/`) in `user`'s
    /// archive as `ScrobbleOrigin.received` (the archive's duplicate rule
    /// applies) and puts them in the outbox of the services `owner`
    /// forwards to (`ReceivedListenStore`: on SQLite in one transaction),
    /// then drops every answer this instance kept that was made without
    /// them (pages, cards, JSON) and wakes the sender, all before the
    /// player hears "ok".
    package func keep(_ listens: [ListenToForward], of user: Username, owner: ListOwner) async throws(ReceivedListensFailure) {
        guard !listens.isEmpty else { return }
        let queued: Int
        do {
            queued = try await store.keep(listens, of: user, owner: owner, forwardingAmong: forwarding?.targets ?? [], at: clock.now)
        } catch {
            switch error {
            case .notKept(let failure): throw .storage(failure.forVisitors)
            }
        }
        await kept(for: user, queued: queued)
    }

    /// The same for listens sent with a listen `token`, whose holder is
    /// read in the transaction that keeps them (`ListenTokens.sender` says
    /// from the holder whom they are for); nil when the token may not send
    /// them, and then nothing is stored.
    package func keep(_ listens: [ListenToForward], sentWith token: String,
              sender: @escaping @Sendable (ListenTokenHolder?) -> ListenSender?) async throws(ReceivedListensFailure) -> ListenSender? {
        let kept: KeptListens?
        do {
            kept = try await store.keep(listens, sentWithToken: ListenTokens.digest(token), sender: sender,
                                        forwardingAmong: forwarding?.targets ?? [], at: clock.now)
        } catch {
            switch error {
            case .notKept(let failure): throw .storage(failure.forVisitors)
            }
        }
        guard let kept else { return nil }
        await self.kept(for: kept.sender.user, queued: kept.queued)
        return kept.sender
    }

    /// After listens are kept: the user's pages and cards kept in memory
    /// here were made without them (the other instances of a fleet heard
    /// so from the store's transaction); the sender wakes for what was queued.
    private func kept(for user: Username, queued: Int) async {
        await changes.changed(.listens(user), fleetTold: true)
        if queued > 0 { forwarding?.wake() }
    }

    /// A player says `user` (whose token `owner` holds) plays `scrobble`
    /// now: shown on their chart page while it lasts, on every instance of
    /// a fleet, and passed on to the services `owner` forwards to.
    package func startedPlaying(_ scrobble: Scrobble, seconds: Int64?, for user: Username, owner: ListOwner) async {
        let track = nowPlaying.started(scrobble, seconds: seconds, for: user)
        forwarding?.playingNow(ListenToForward(scrobble: scrobble, duration: seconds), of: owner)
        await notices?.announce(.playingNow(user: user.value, artist: track.artist, track: track.track, album: track.album,
                                                 until: Int64(track.until.timeIntervalSince1970)))
    }
}
