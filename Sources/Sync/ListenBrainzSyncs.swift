import Foundation
import Stores
import VinylogueCore

/// Copies `lb:` users' listens into the archive when their pages are
/// asked for, so a ListenBrainz user is charted like any archived one:
/// the first view starts a sync in the background and the page says it is
/// running; later views start another (incremental) one at most once per
/// `freshFor`. At most one sync per user runs at a time; a failure is
/// remembered for `retryFailuresAfter` so a misspelt name is not asked
/// about on every view.
public actor ListenBrainzSyncs {
    /// Where a user's copy stands.
    public enum Status: Sendable, Equatable {
        /// No sync has run in this process.
        case never
        /// A sync is running.
        case copying
        /// The last sync finished then.
        case copied(at: Date)
        /// The last sync failed then, with this failure.
        case failed(SourceError, at: Date)
    }

    let sync: ScrobbleSync
    /// Runs each sync as the person's durable history-copy job, so that a
    /// terminal `sync` or another instance of a fleet never copies the same
    /// person alongside (nil: in this process only).
    let copying: ClaimedCopy?
    let clock: WallClock
    let start: @Sendable (@escaping @Sendable () async -> Void) async -> Void
    let freshFor: TimeInterval
    let retryFailuresAfter: TimeInterval
    private var statuses: [String: Status] = [:]
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// `start` runs a job in the background (the web app's `BackgroundWork`,
    /// which bounds and stops them).
    public init(sync: ScrobbleSync, copying: ClaimedCopy? = nil, clock: WallClock, freshFor: TimeInterval = 3600,
                retryFailuresAfter: TimeInterval = 300, start: @escaping @Sendable (@escaping @Sendable () async -> Void) async -> Void) {
        self.sync = sync
        self.copying = copying
        self.clock = clock
        self.freshFor = freshFor
        self.retryFailuresAfter = retryFailuresAfter
        self.start = start
    }

    /// Where `user`'s copy stands, without starting anything.
    public func status(of user: Username) -> Status { statuses[user.key] ?? .never }

    /// Starts a sync of `user` (an `lb:` user) unless one is running or
    /// ran lately; returns where the copy stands now.
    @discardableResult
    public func refresh(_ user: Username) async -> Status {
        guard user.service == .listenBrainz else { return .never }
        let now = clock.now
        switch statuses[user.key] {
        case .copying?: return .copying
        case .copied(let at)? where now.timeIntervalSince(at) < freshFor: return .copied(at: at)
        case .failed(let error, let at)? where now.timeIntervalSince(at) < retryFailuresAfter: return .failed(error, at: at)
        default: break
        }
        statuses[user.key] = .copying
        let sync = self.sync, clock = self.clock, copying = self.copying
        await start {
            let outcome: Status
            do throws(SourceError) {
                if let copying {
                    if let claim = try await copying.claim(user) {
                        _ = try await copying.run(claim, sync)
                        outcome = .copied(at: clock.now)
                    } else {
                        // Another process copies them now: said as running,
                        // and asked again after `retryFailuresAfter`.
                        outcome = .failed(.listenBrainz(.copying(user: user.value)), at: clock.now)
                    }
                } else {
                    _ = try await sync.sync(user)
                    outcome = .copied(at: clock.now)
                }
            } catch {
                outcome = .failed(error, at: clock.now)
            }
            await self.finish(user, outcome)
        }
        return statuses[user.key] ?? .copying
    }

    /// Returns once no sync of `user` is running.
    public func settled(_ user: Username) async {
        guard statuses[user.key] == .copying else { return }
        await withCheckedContinuation { waiters[user.key, default: []].append($0) }
    }

    private func finish(_ user: Username, _ outcome: Status) {
        statuses[user.key] = outcome
        waiters.removeValue(forKey: user.key)?.forEach { $0.resume() }
    }
}
