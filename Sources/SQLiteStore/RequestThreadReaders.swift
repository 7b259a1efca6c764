import Foundation
import GRDB
import Stores

/// One read-only connection for each of the server's request threads
/// (`RequestThreads`), opened on that thread's first short read.
///
/// A short read on a request thread runs right there, and must not wait
/// for anything another task holds: GRDB's pooled readers are held across
/// suspensions by awaited reads, whose tasks resume on these same threads,
/// so request threads blocked waiting for a pooled reader would wait for
/// ever (seen: 50 cold pages at once stopped the server). A connection a
/// thread owns alone is never held by anyone else. In WAL mode each reads
/// its own snapshot, as the pool's readers do.
final class RequestThreadReaders: @unchecked Sendable {
    let threads: RequestThreads
    private let path: String
    private let configuration: Configuration
    /// Guards `connections`.
    private let lock = NSLock()
    private var connections: [DatabaseQueue?]

    init(threads: RequestThreads, path: String, configuration: Configuration) {
        self.threads = threads
        self.path = path
        var readOnly = configuration
        readOnly.readonly = true
        self.configuration = readOnly
        connections = Array(repeating: nil, count: threads.count)
    }

    /// The calling thread's own connection, or nil when it is not one of
    /// the request threads (or its connection cannot be opened: the
    /// caller then reads the usual way, and says what failed).
    func connection() -> DatabaseQueue? {
        guard let index = threads.currentIndex else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let connection = connections[index] { return connection }
        let connection = try? DatabaseQueue(path: path, configuration: configuration)
        connections[index] = connection
        return connection
    }
}
