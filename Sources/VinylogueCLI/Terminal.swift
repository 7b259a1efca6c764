import Foundation

/// Output streams, and whether colour may be used on them.
public struct Terminal: Sendable {
    let fd: Int32

    public static let standardOutput = Terminal(fd: 1)
    public static let standardError = Terminal(fd: 2)

    public func write(_ text: String) {
        FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(Data(text.utf8))
    }

    /// Whether this stream is a terminal.
    public var isTerminal: Bool { isatty(fd) == 1 }
}
