import Archive
import Foundation
import VinylogueCore

/// The settings in force: read through from the database at most once a
/// `refreshInterval`, so a change saved by another server on the same data
/// directory shows here within that time (it used to need a restart), while
/// a warm page still costs no database read. Saves here apply at once.
public final class CurrentSettings: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Settings
    private var readAt: Date
    private let store: ListStore
    private let clock: WallClock
    private let refreshInterval: TimeInterval

    /// Loads the stored settings.
    public init(store: ListStore, clock: WallClock, refreshInterval: TimeInterval = 1) async throws {
        self.store = store
        self.clock = clock
        self.refreshInterval = refreshInterval
        self.value = try await store.settings()
        self.readAt = clock.now
    }

    /// The settings, read again from the database when the copy here is
    /// older than `refreshInterval`. A failed read keeps the last copy.
    public func current() async -> Settings {
        let now = clock.now
        let (copy, due): (Settings, Bool) = lock.withLock {
            let due = now.timeIntervalSince(readAt) >= refreshInterval || now < readAt
            if due { readAt = now }  // one reader refreshes; the others use the copy meanwhile
            return (value, due)
        }
        guard due, let fresh = try? await store.settings() else { return copy }
        lock.withLock { value = fresh }
        return fresh
    }

    public func save(_ settings: Settings) async throws {
        try await store.save(settings)
        lock.withLock {
            value = settings
            readAt = clock.now
        }
    }
}

extension Settings {
    /// A short string that changes whenever the settings do.
    var fingerprint: String { "\(filter.threshold)|\(timeZoneIdentifier ?? "")" }
}
