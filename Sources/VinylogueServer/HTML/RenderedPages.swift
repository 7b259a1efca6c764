import Foundation
import Hummingbird
import VinylogueCore

/// Recently rendered pages, kept in memory for a short time so a popular
/// page costs a dictionary lookup instead of a render.
///
/// Only complete pages are kept: never an error, never a page built from a
/// stale copy. Entries live `lifetime` (60 s by default), which bounds how
/// far "N years ago" can drift; settings changes empty the cache.
final class RenderedPages: @unchecked Sendable {
    struct Entry {
        let status: HTTPResponse.Status
        let body: ByteBuffer
        let expires: Date
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private let clock: WallClock
    private let lifetime: TimeInterval
    private let capacity: Int

    init(clock: WallClock, lifetime: TimeInterval = 60, capacity: Int = 2000) {
        self.clock = clock
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func page(_ key: String) -> Entry? {
        let now = clock.now
        return lock.withLock {
            guard let entry = entries[key] else { return nil }
            if entry.expires <= now {
                entries[key] = nil
                return nil
            }
            return entry
        }
    }

    func keep(_ key: String, status: HTTPResponse.Status, body: ByteBuffer) {
        let expires = clock.now.addingTimeInterval(lifetime)
        lock.withLock {
            if entries.count >= capacity {
                // Drop the expired ones; if none, start over.
                let now = clock.now
                entries = entries.filter { $0.value.expires > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(status: status, body: body, expires: expires)
        }
    }

    func removeAll() {
        lock.withLock { entries.removeAll() }
    }
}
