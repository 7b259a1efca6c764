/// An email address as a person types it into a form: a plain
/// `local@domain` (an RFC 5321 mailbox in dot-atom form), nothing else.
///
/// The checks are strict on purpose: the address ends up in `From:` and
/// `To:` headers and in `MAIL FROM:` / `RCPT TO:` commands, so an address
/// that passes can carry no line break, no angle bracket, no comment and no
/// second address. Quoted local parts, domain literals (`user@[1.2.3.4]`) and
/// unencoded international names are refused.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The part before the `@`.
    public let localPart: String
    /// The part after the `@`, as typed.
    public let domain: String

    /// The longest address SMTP carries (RFC 5321's path limit less its brackets).
    public static let maximumLength = 254

    /// `nil` unless `text`, with surrounding whitespace trimmed, is a plain
    /// ASCII `local@domain` whose domain has a dot (or is `localhost`).
    public init?(_ text: String) {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty, trimmed.utf8.count <= Self.maximumLength else { return nil }
        let bytes = Array(trimmed.utf8)
        guard bytes.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")),
              bytes.lastIndex(of: UInt8(ascii: "@")) == at
        else { return nil }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard Self.isDotAtomLocalPart(local), Self.isHostName(domain) else { return nil }
        self.localPart = String(decoding: local, as: UTF8.self)
        self.domain = String(decoding: domain, as: UTF8.self)
    }

    /// `local@domain`.
    public var description: String { "\(localPart)@\(domain)" }

    /// RFC 5322 `atext` and dots, no dot first, last or twice in a row, at most 64 octets.
    private static func isDotAtomLocalPart(_ local: ArraySlice<UInt8>) -> Bool {
        guard !local.isEmpty, local.count <= 64,
              local.first != UInt8(ascii: "."), local.last != UInt8(ascii: ".")
        else { return false }
        var previous: UInt8 = 0
        for byte in local {
            if byte == UInt8(ascii: "."), previous == UInt8(ascii: ".") { return false }
            guard byte == UInt8(ascii: ".") || isAtext(byte) else { return false }
            previous = byte
        }
        return true
    }

    private static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    /// Letters, digits and hyphens in dot-separated labels of 1–63 octets,
    /// no hyphen at either end of a label; a dot somewhere, or `localhost`.
    private static func isHostName(_ domain: ArraySlice<UInt8>) -> Bool {
        guard !domain.isEmpty, domain.count <= 253 else { return false }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if labels.count == 1 {
            return String(decoding: domain, as: UTF8.self).lowercased() == "localhost"
        }
        return labels.allSatisfy { label in
            guard (1...63).contains(label.count),
                  label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-")
            else { return false }
            return label.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
        }
    }
}

extension String {
    /// The string without spaces, tabs, CR and LF at either end.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
