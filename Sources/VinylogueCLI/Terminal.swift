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

extension Terminal {
    /// `text` with every control character (C0 but the line break, DEL and
    /// C1) written as a visible escape (`\u{1B}`): names and lines from an
    /// export are someone else's bytes, and a terminal would act on its
    /// control sequences (retitle the window, clear the screen, …).
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
    }
}
