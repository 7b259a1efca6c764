import Foundation
import Hummingbird
import VinylogueCore

/// Recently rendered pages, kept in memory for a short time so a popular
/// page costs a dictionary lookup instead of a render.
///
/// Only complete pages are kept: never an error, never a page built from a
/// stale copy. Entries live `lifetime` (60 s by default), which bounds how
/// far "N years ago" can drift; settings changes empty the cache. The cache
/// is bounded by entries and by bytes, so no stream of distinct requests can
/// grow memory past `maxBytes`.
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
    private let maxBytes: Int
    private var bytes = 0

    init(clock: WallClock, lifetime: TimeInterval = 60, capacity: Int = 2000, maxBytes: Int = 32 << 20) {
        self.clock = clock
        self.lifetime = lifetime
        self.capacity = capacity
        self.maxBytes = maxBytes
    }

    /// How many bytes of pages are kept now.
    var keptBytes: Int { lock.withLock { bytes } }

    func page(_ key: String) -> Entry? {
        let now = clock.now
        return lock.withLock {
            guard let entry = entries[key] else { return nil }
            if entry.expires <= now {
                entries[key] = nil
                bytes -= entry.body.readableBytes
                return nil
            }
            return entry
        }
    }

    func keep(_ key: String, status: HTTPResponse.Status, body: ByteBuffer) {
        let expires = clock.now.addingTimeInterval(lifetime)
        guard body.readableBytes <= maxBytes / 4 else { return }
        lock.withLock {
            if entries.count >= capacity || bytes + body.readableBytes > maxBytes {
                // Drop the expired ones; if that is not enough, start over.
                let now = clock.now
                entries = entries.filter { $0.value.expires > now }
                if entries.count >= capacity || entries.values.reduce(0, { $0 + $1.body.readableBytes }) + body.readableBytes > maxBytes {
                    entries.removeAll(keepingCapacity: true)
                }
                bytes = entries.values.reduce(0) { $0 + $1.body.readableBytes }
            }
            if let old = entries[key] { bytes -= old.body.readableBytes }
            entries[key] = Entry(status: status, body: body, expires: expires)
            bytes += body.readableBytes
        }
    }

    func removeAll() {
        lock.withLock {
            entries.removeAll()
            bytes = 0
        }
    }
}
