import Archive
import Foundation
import Synchronization
import VinylogueCore

/// The settings in force: read through from the database at most once a
/// `refreshInterval`, so a change saved by another server on the same data
/// directory shows here within that time (it used to need a restart), while
/// a warm page still costs no database read. Saves here apply at once.
public final class CurrentSettings: Sendable {
    private struct Copy {
        var value: Settings
        var readAt: Date
    }

    private let copy: Mutex<Copy>
    private let store: ListStore
    private let clock: WallClock
    private let refreshInterval: TimeInterval

    /// Loads the stored settings.
    public init(store: ListStore, clock: WallClock, refreshInterval: TimeInterval = 1) async throws {
        self.store = store
        self.clock = clock
        self.refreshInterval = refreshInterval
        self.copy = Mutex(Copy(value: try await store.settings(), readAt: clock.now))
    }

    /// The settings, read again from the database when the copy here is
    /// older than `refreshInterval`. A failed read keeps the last copy.
    public func current() async -> Settings {
        let now = clock.now
        let refreshInterval = self.refreshInterval
        let (kept, due): (Settings, Bool) = copy.withLock { copy in
            let due = now.timeIntervalSince(copy.readAt) >= refreshInterval || now < copy.readAt
            if due { copy.readAt = now }  // one reader refreshes; the others use the copy meanwhile
            return (copy.value, due)
        }
        guard due, let fresh = try? await store.settings() else { return kept }
        copy.withLock { $0.value = fresh }
        return fresh
    }

    public func save(_ settings: Settings) async throws {
        try await store.save(settings)
        let now = clock.now
        copy.withLock { $0 = Copy(value: settings, readAt: now) }
    }
}

extension Settings {
    /// A short string that changes whenever the settings do.
    var fingerprint: String { "\(filter.threshold)|\(timeZoneIdentifier ?? "")" }
}
