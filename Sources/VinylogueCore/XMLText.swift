/// Text made safe for XML (the Last.fm-compatible API's answers, the SVG
/// widget, playlist files).
public enum XMLText {
    /// `text` safe inside an element or an attribute; characters XML 1.0
    /// cannot carry at all (control characters) become U+FFFD.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// `text` (already escaped) with the characters HTML and XML may not
    /// carry — C0 controls but tab and the line breaks, DEL and C1 —
    /// made U+FFFD: what a player scrobbled is kept as sent, and a page
    /// shows it without handing a browser a NUL or an escape.
    public static func withoutControls(_ text: String) -> String {
        // Fast: most pages have none (a C1 character is 0xC2 then 0x80–0x9F in UTF-8).
        var previous: UInt8 = 0
        let suspect = text.utf8.contains { byte in
            defer { previous = byte }
            return (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F || (previous == 0xC2 && byte < 0xA0 && byte >= 0x80)
        }
        guard suspect else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let control = (value < 0x20 && value != 0x09 && value != 0x0A && value != 0x0D) || (0x7F...0x9F).contains(value)
            out.append(control ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }
}
