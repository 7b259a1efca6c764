import Archive
import Foundation

/// The settings in force, held in memory (read on every page) and written
/// through to the database.
public final class CurrentSettings: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Settings
    private let store: ListStore

    /// Loads the stored settings.
    public init(store: ListStore) async throws {
        self.store = store
        self.value = try await store.settings()
    }

    public var settings: Settings { lock.withLock { value } }

    public func save(_ settings: Settings) async throws {
        try await store.save(settings)
        lock.withLock { value = settings }
    }

    /// A short string that changes whenever the settings do.
    var fingerprint: String {
        let s = settings
        return "\(s.filter.threshold)|\(s.timeZoneIdentifier ?? "")"
    }
}
