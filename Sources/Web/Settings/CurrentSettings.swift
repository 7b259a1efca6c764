import Stores
import Sync
import Foundation
import Synchronization
import VinylogueCore

/// The settings in force for each owner (the household, or an account):
/// read again from the database at most once a `refreshInterval`, in the
/// background, so a change saved by another server on the same database
/// shows here within that time and a read, while a page never waits for
/// the database once its owner's copy is here. Saves here apply at once.
/// A visitor who has not signed in gets the defaults.
public final class CurrentSettings: Sendable {
    private struct Copy {
        var value: Settings
        var readAt: Date
        /// Set anew by every save from one counter that only grows, so a
        /// read that began before a save (or before the copies were
        /// dropped and made again) does not put back what it replaced.
        var version = 0
        /// The read under way, if any.
        var refreshing: Task<Void, Never>?
    }

    private let copies: Mutex<[ListOwner: Copy]>
    /// The last version given to a saved copy.
    private let versions = Atomic<Int>(0)
    private let store: any ListStore
    private let clock: WallClock
    private let refreshInterval: TimeInterval
    /// At most this many owners' copies are kept; past it, all are dropped
    /// and read again as needed.
    private let capacity = 10_000

    /// Loads the household's stored settings.
    public init(store: any ListStore, clock: WallClock, refreshInterval: TimeInterval = 1) async throws {
        self.store = store
        self.clock = clock
        self.refreshInterval = refreshInterval
        self.copies = Mutex([.household: Copy(value: try await store.owned(by: .household).settings(), readAt: clock.now)])
    }

    /// `owner`'s settings (the defaults for nobody): the copy here, read
    /// from the database only the first time. A copy older than
    /// `refreshInterval` is read again in the background, while this and
    /// other requests use it; a failed read keeps it.
    public func current(for owner: ListOwner? = .household) async -> Settings {
        guard let owner else { return Settings() }
        let now = clock.now
        let refreshInterval = self.refreshInterval
        let kept: Settings? = copies.withLock { copies in
            guard var copy = copies[owner] else { return nil }
            let due = now.timeIntervalSince(copy.readAt) >= refreshInterval || now < copy.readAt
            if due && copy.refreshing == nil {
                copy.readAt = now
                let version = copy.version
                copy.refreshing = Task { [self] in await self.read(owner, since: version, at: now) }
                copies[owner] = copy
            }
            return copy.value
        }
        if let kept { return kept }
        guard let fresh = try? await store.owned(by: owner).settings() else { return Settings() }
        // Kept only if no copy arrived meanwhile: a save made while this
        // read ran is newer than what it read.
        return copies.withLock { copies in
            if let arrived = copies[owner] { return arrived.value }
            if copies.count >= capacity { copies.removeAll(keepingCapacity: true) }
            copies[owner] = Copy(value: fresh, readAt: now, version: versions.add(1, ordering: .relaxed).newValue)
            return fresh
        }
    }

    /// Waits for the background read of `owner`'s settings under way, if
    /// any (for tests, which wait on it as an event).
    func refreshed(for owner: ListOwner = .household) async {
        await copies.withLock { $0[owner]?.refreshing }?.value
    }

    /// Reads `owner`'s settings again; keeps them unless a save came first.
    private func read(_ owner: ListOwner, since version: Int, at now: Date) async {
        let fresh = try? await store.owned(by: owner).settings()
        copies.withLock { copies in
            guard var copy = copies[owner] else { return }
            copy.refreshing = nil
            if let fresh, copy.version == version { copy.value = fresh }
            copies[owner] = copy
        }
    }

    public func save(_ settings: Settings, for owner: ListOwner = .household) async throws {
        try await store.owned(by: owner).save(settings)
        keep(settings, for: owner, readAt: clock.now)
    }

    private func keep(_ settings: Settings, for owner: ListOwner, readAt: Date) {
        let capacity = self.capacity
        copies.withLock { copies in
            if copies.count >= capacity, copies[owner] == nil { copies.removeAll(keepingCapacity: true) }
            var copy = copies[owner] ?? Copy(value: settings, readAt: readAt)
            copy.value = settings
            copy.readAt = readAt
            copy.version = versions.add(1, ordering: .relaxed).newValue
            copies[owner] = copy
        }
    }
}

