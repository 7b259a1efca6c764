import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// glibc's (2.34+) GNU extensions, declared here: Swift's Glibc module
// leaves out what `_GNU_SOURCE` guards.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnActionsAddCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func spawnActionsAddChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>) -> Int32

/// A child process for tests, started with `posix_spawn`, with the part of
/// Foundation's `Process` the tests use.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close the
/// parent's descriptors in the child and copies each entry's whole 256-byte
/// name, reading past the end of glibc's buffer: with the 1,800 descriptors
/// a full parallel test run holds, it crashed the test process (seen in CI,
/// swift-corelibs-foundation#5472). Here the child closes them with one
/// `closefrom` spawn action instead.
public final class ChildProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; nil: this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// `FileHandle` or `Pipe` (its writing end); nil: this process's own.
    public var standardOutput: Any?
    public var standardError: Any?
    /// `FileHandle` or `Pipe` (its reading end); nil: this process's own.
    public var standardInput: Any?
    /// Called once the child has ended, on a thread of its own (set it
    /// before `run`, or at any time: it is read when the child ends).
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }
    private let handler = Mutex<(@Sendable (ChildProcess) -> Void)?>(nil)

    private struct Ended { var status: Int32 }
    private let ended = Mutex<Ended?>(nil)
    private let done = DispatchSemaphore(value: 0)
    public private(set) var processIdentifier: Int32 = 0

    public init() {}

    public struct SpawnFailed: Error, CustomStringConvertible {
        public let path: String
        public let code: Int32
        public var description: String { "\(path) could not be started: \(String(cString: strerror(code)))" }
    }

    public func run() throws {
        guard let executable = executableURL?.path else { throw SpawnFailed(path: "(no executable)", code: ENOENT) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Foundation's `nullDevice` has no descriptor on Linux (-1): it, and
        // a standard input not given, are /dev/null, opened here.
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw SpawnFailed(path: "/dev/null", code: errno) }
        defer { close(null) }
        var failure: Int32 = 0
        func check(_ code: Int32) { if code != 0 && failure == 0 { failure = code } }
        func redirect(_ target: Any?, to fd: Int32, reading: Bool, otherwise: Int32?) {
            var source: Int32? = switch target {
            case let pipe as Pipe: reading ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case let handle as FileHandle: handle.fileDescriptor
            default: otherwise
            }
            if let given = source, given < 0 { source = null }
            if let source { check(posix_spawn_file_actions_adddup2(&actions, source, fd)) }
        }
        redirect(standardInput, to: 0, reading: true, otherwise: null)
        redirect(standardOutput, to: 1, reading: false, otherwise: nil)
        redirect(standardError, to: 2, reading: false, otherwise: nil)
        check(spawnActionsAddCloseFrom(&actions, 3))
        if let directory = currentDirectoryURL?.path { check(directory.withCString { spawnActionsAddChdir(&actions, $0) }) }
        guard failure == 0 else { throw SpawnFailed(path: executable, code: failure) }
        guard processIdentifier == 0 else { throw SpawnFailed(path: executable, code: EBUSY) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + env { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, nil, argv, env)
        guard code == 0 else { throw SpawnFailed(path: executable, code: code) }
        processIdentifier = pid
        let child = pid
        // The parent's copies of the child's pipe ends, closed, so a reader
        // sees the end of the child's output when it ends.
        for case let pipe as Pipe in [standardOutput, standardError] { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        let waiter = Thread { [self] in
            var status: Int32 = 0
            var reaped: pid_t = -1
            repeat { reaped = waitpid(child, &status, 0) } while reaped == -1 && errno == EINTR
            // Not ours to reap (ECHILD): said as killed, never as a clean exit.
            if reaped == -1 { status = SIGKILL }
            ended.withLock { $0 = Ended(status: status) }
            done.signal()
            terminationHandler?(self)
        }
        waiter.name = "child \(child)"
        waiter.start()
    }

    public var isRunning: Bool { processIdentifier != 0 && ended.withLock { $0 == nil } }

    /// Blocks until the child has ended.
    public func waitUntilExit() {
        guard processIdentifier != 0 else { return }
        done.wait()
        done.signal()
    }

    /// The exit code, or the signal number for a child a signal ended (as
    /// Foundation's `Process` reports it).
    public var terminationStatus: Int32 {
        guard let status = ended.withLock({ $0?.status }) else { return 0 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Whether a signal ended the child.
    public var endedBySignal: Bool { ended.withLock { $0.map { $0.status & 0x7f != 0 } ?? false } }

    public func terminate() { if isRunning { kill(processIdentifier, SIGTERM) } }
    public func interrupt() { if isRunning { kill(processIdentifier, SIGINT) } }
}
