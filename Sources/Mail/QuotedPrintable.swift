/// The quoted-printable content transfer encoding (RFC 2045 §6.7) of text
/// whose line breaks are already CRLF.
enum QuotedPrintable {
    /// The longest encoded line, soft-break `=` included.
    static let maximumLineLength = 76

    /// `text`'s UTF-8 encoded: every line break (CRLF, lone CR or lone LF)
    /// becomes a CRLF hard break; `=`, control characters, non-ASCII octets
    /// and whitespace at the end of a line are `=XX`; lines longer than 76
    /// characters are cut with soft breaks (`=` CRLF).
    static func encode(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        for (index, line) in lines(of: Array(text.utf8)).enumerated() {
            if index > 0 { output.append(contentsOf: crlf) }
            encodeLine(line, into: &output)
        }
        return output
    }

    /// `bytes` cut at CRLF, lone CR and lone LF.
    static func lines(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == cr || byte == lf {
                lines.append(bytes[start..<index])
                if byte == cr, index + 1 < bytes.count, bytes[index + 1] == lf { index += 1 }
                start = index + 1
            }
            index += 1
        }
        lines.append(bytes[start..<bytes.count])
        return lines
    }

    private static func encodeLine(_ line: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var lineLength = 0
        var position = line.startIndex
        while position < line.endIndex {
            let byte = line[position]
            let isLast = position == line.index(before: line.endIndex)
            let literal = isSafe(byte) || (!isLast && (byte == space || byte == tab))
            let width = literal ? 1 : 3
            // Room for this octet, and for a soft break after it unless it ends the line.
            let limit = isLast ? maximumLineLength : maximumLineLength - 1
            if lineLength + width > limit {
                output.append(equals)
                output.append(contentsOf: crlf)
                lineLength = 0
            }
            if literal {
                output.append(byte)
            } else {
                output.append(equals)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
            lineLength += width
            position = line.index(after: position)
        }
    }

    /// Printable ASCII other than `=`, which stands for itself anywhere.
    private static func isSafe(_ byte: UInt8) -> Bool {
        (33...126).contains(byte) && byte != equals
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let crlf: [UInt8] = [cr, lf]
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let equals = UInt8(ascii: "=")
    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
