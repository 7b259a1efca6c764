import Foundation

/// One header line of a message, folded (RFC 5322 §2.2.3) and with text
/// outside ASCII as RFC 2047 encoded words. A value can never break out of
/// its field: CR and LF in it are turned into spaces before anything else.
struct HeaderField {
    /// Lines are folded to stay within this many characters where the words allow.
    static let preferredLineLength = 78
    /// No line is ever longer than this (RFC 5322's hard limit, CRLF excluded).
    static let maximumLineLength = 998
    /// RFC 2047's limit on one encoded word.
    static let maximumEncodedWordLength = 75

    let name: String
    /// Words joined by single spaces, each free of whitespace and line breaks.
    let words: [String]

    /// A free-text field (`Subject`, most extra headers): ASCII stays as it
    /// is; anything else becomes encoded words.
    static func text(_ name: String, _ value: String) -> HeaderField {
        let value = singleLine(value)
        if isPlainASCII(value) {
            return HeaderField(name: name, words: value.split(separator: " ").map(String.init))
        }
        return HeaderField(name: name, words: encodedWords(value, firstWidth: firstWordWidth(name)))
    }

    /// `From:`/`To:` with an optional display name before the address.
    static func mailbox(_ name: String, address: MailAddress, displayName: String?) -> HeaderField {
        let addressWord = "<\(address)>"
        guard let displayName = displayName.map(singleLine), !displayName.isEmpty else {
            return HeaderField(name: name, words: [address.description])
        }
        if isPlainASCII(displayName) {
            let isAtomText = displayName.utf8.allSatisfy { byte in
                byte == UInt8(ascii: " ") || isAtext(byte)
            }
            let phrase = isAtomText ? displayName : quoted(displayName)
            return HeaderField(name: name, words: phrase.split(separator: " ").map(String.init) + [addressWord])
        }
        return HeaderField(name: name, words: encodedWords(displayName, firstWidth: firstWordWidth(name)) + [addressWord])
    }

    /// The field as CRLF-terminated lines: words are moved to a new line
    /// (CRLF SP) before a line would pass 78 characters; a single word too
    /// long for 998 is cut.
    func rendered() -> String {
        var output = "\(name):"
        var lineLength = output.utf8.count
        var wordsOnLine = 0
        for word in words.flatMap(Self.cutToHardLimit) {
            let width = word.utf8.count
            if wordsOnLine > 0,
               lineLength + 1 + width > Self.preferredLineLength || lineLength + 1 + width > Self.maximumLineLength {
                output += "\r\n"
                lineLength = 0
                wordsOnLine = 0
            }
            output += " " + word
            lineLength += 1 + width
            wordsOnLine += 1
        }
        return output + "\r\n"
    }

    /// Pieces short enough to sit after a space on a line of at most 998 characters.
    private static func cutToHardLimit(_ word: String) -> [String] {
        // The longest header name plus ": " still leaves room for this.
        let longest = maximumLineLength - 100
        let bytes = Array(word.utf8)
        guard bytes.count > longest else { return [word] }
        return stride(from: 0, to: bytes.count, by: longest).map { start in
            String(decoding: bytes[start..<min(start + longest, bytes.count)], as: UTF8.self)
        }
    }

    /// `value` on one line: CR, LF and tabs become spaces, other controls go.
    static func singleLine(_ value: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar.value {
            case 0x0D, 0x0A, 0x09, 0x2028, 0x2029, 0x85:
                scalars.append(" ")
            case 0x00..<0x20, 0x7F:
                continue
            default:
                scalars.append(scalar)
            }
        }
        return String(scalars).trimmingASCIIWhitespace()
    }

    /// Printable ASCII and spaces only, and nothing a reader would take for
    /// the start of an encoded word.
    private static func isPlainASCII(_ value: String) -> Bool {
        value.utf8.allSatisfy { (32...126).contains($0) } && !value.contains("=?")
    }

    private static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The room for the first word on the field's first line.
    private static func firstWordWidth(_ name: String) -> Int {
        let room = preferredLineLength - name.utf8.count - 2
        // A header name so long that no sensible word fits: let the first line run longer.
        return room < 16 ? maximumEncodedWordLength : min(room, maximumEncodedWordLength)
    }

    /// `=?UTF-8?B?…?=` words, each holding whole characters, the first at
    /// most `firstWidth` long and the rest at most 75.
    static func encodedWords(_ text: String, firstWidth: Int) -> [String] {
        var words: [String] = []
        var chunk: [UInt8] = []
        var width = firstWidth
        func capacity(_ width: Int) -> Int { (width - 12) / 4 * 3 }
        func flush() {
            guard !chunk.isEmpty else { return }
            words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
            chunk = []
            width = maximumEncodedWordLength
        }
        for character in text {
            // A character longer than a word can hold goes scalar by scalar.
            let pieces: [[UInt8]] = Array(character.utf8).count <= capacity(maximumEncodedWordLength)
                ? [Array(character.utf8)]
                : character.unicodeScalars.map { Array(String($0).utf8) }
            for piece in pieces {
                if chunk.count + piece.count > capacity(width) { flush() }
                chunk += piece
            }
        }
        flush()
        return words
    }
}
