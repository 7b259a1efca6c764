import Foundation

/// Output streams, and whether colour may be used on them.
public struct Terminal: Sendable {
    let fd: Int32

    public static let standardOutput = Terminal(fd: 1)
    public static let standardError = Terminal(fd: 2)

    public func write(_ text: String) {
        FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(Data(text.utf8))
    }

    /// Colour only on a terminal, never with `NO_COLOR` set, never on `TERM=dumb`.
    public func allowsColour(environment: [String: String]) -> Bool {
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return isatty(fd) == 1
    }
}
