import Foundation

/// JSON text for values written by hand (faster than an encoder per line).
public enum JSONText {
    /// `value` as a JSON string: quotes, backslashes and control characters escaped.
    public static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                out += "\\u00" + String(c.value, radix: 16).leftPadded(to: 2)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
