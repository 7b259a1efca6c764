import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes to the files of one directory, as events (Linux's inotify): how
/// a test waits for another process to write, a commit to its database
/// for instance, without polling. Blocking: use it from a thread of its
/// own, never from Swift's cooperative pool.
public final class FileWrites: @unchecked Sendable {
    private let descriptor: Int32

    public struct Unwatchable: Error, CustomStringConvertible {
        public let path: String
        public let code: Int32
        public var description: String { "\(path) cannot be watched: \(String(cString: strerror(code)))" }
    }

    /// Starts watching `directory` (which must exist): writes after this are seen.
    public init(in directory: URL) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw Unwatchable(path: directory.path, code: errno) }
        guard inotify_add_watch(descriptor, directory.path, UInt32(IN_MODIFY)) >= 0 else {
            let code = errno
            close(descriptor)
            throw Unwatchable(path: directory.path, code: code)
        }
    }

    deinit { close(descriptor) }

    /// Returns true once a file whose name ends with `suffix` has been
    /// written since the last call (or since watching began), false when
    /// `patience` passes first.
    public func next(endingWith suffix: String, within patience: Duration) -> Bool {
        let deadline = ContinuousClock.now + patience
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            let polled = poll(&ready, 1, milliseconds)
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { return false }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            // Events: a fixed header (wd, mask, cookie, len) and `len` bytes of name.
            var offset = 0
            var seen = false
            while offset + 16 <= count {
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if String(decoding: name, as: UTF8.self).hasSuffix(suffix) { seen = true }
                offset += 16 + length
            }
            if seen { return true }
        }
    }
}
