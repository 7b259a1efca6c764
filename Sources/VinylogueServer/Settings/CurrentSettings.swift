import Stores
import Sync
import Foundation
import Synchronization
import VinylogueCore

/// The settings in force for each owner (the household, or an account):
/// read through from the database at most once a `refreshInterval`, so a
/// change saved by another server on the same database shows here within
/// that time, while a warm page still costs no database read. Saves here
/// apply at once. A visitor who has not signed in gets the defaults.
public final class CurrentSettings: Sendable {
    private struct Copy {
        var value: Settings
        var readAt: Date
    }

    private let copies: Mutex<[ListOwner: Copy]>
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

    /// `owner`'s settings (the defaults for nobody), read again from the
    /// database when the copy here is older than `refreshInterval`. A failed
    /// read keeps the last copy.
    public func current(for owner: ListOwner? = .household) async -> Settings {
        guard let owner else { return Settings() }
        let now = clock.now
        let refreshInterval = self.refreshInterval
        let (kept, due): (Settings?, Bool) = copies.withLock { copies in
            guard var copy = copies[owner] else { return (nil, true) }
            let due = now.timeIntervalSince(copy.readAt) >= refreshInterval || now < copy.readAt
            if due {
                copy.readAt = now  // one reader refreshes; the others use the copy meanwhile
                copies[owner] = copy
            }
            return (copy.value, due)
        }
        guard due else { return kept ?? Settings() }
        guard let fresh = try? await store.owned(by: owner).settings() else { return kept ?? Settings() }
        keep(fresh, for: owner, readAt: now)
        return fresh
    }

    public func save(_ settings: Settings, for owner: ListOwner = .household) async throws {
        try await store.owned(by: owner).save(settings)
        keep(settings, for: owner, readAt: clock.now)
    }

    private func keep(_ settings: Settings, for owner: ListOwner, readAt: Date) {
        let capacity = self.capacity
        copies.withLock { copies in
            if copies.count >= capacity, copies[owner] == nil { copies.removeAll(keepingCapacity: true) }
            copies[owner] = Copy(value: settings, readAt: readAt)
        }
    }
}

extension Settings {
    /// A short string that changes whenever the settings do.
    var fingerprint: String { "\(filter.threshold)|\(timeZoneIdentifier ?? "")" }
}
