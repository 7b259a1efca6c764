/// Splits one CSV record (RFC 4180 quoting: fields in double quotes may hold
/// commas, and `""` inside them is one quote).
///
/// A record is one line: Last.fm's exports never put a newline inside a
/// field, and reading records line by line keeps one broken quote from
/// swallowing the rest of the file.
enum CSVLine {
    /// The fields of `line`, or why it is not valid CSV.
    static func fields(_ line: ArraySlice<UInt8>) -> Result<[String], ImportProblem> {
        var fields: [String] = []
        fields.reserveCapacity(8)
        var i = line.startIndex
        let end = line.endIndex
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        while true {
            if i < end, line[i] == quote {
                // Quoted field.
                var value: [UInt8] = []
                i += 1
                var closed = false
                while i < end {
                    let byte = line[i]
                    if byte == quote {
                        if i + 1 < end, line[i + 1] == quote {
                            value.append(quote)
                            i += 2
                            continue
                        }
                        closed = true
                        i += 1
                        break
                    }
                    value.append(byte)
                    i += 1
                }
                guard closed else { return .failure(.init("unterminated quoted field \(fields.count + 1)")) }
                fields.append(String(decoding: value, as: UTF8.self))
                if i == end { return .success(fields) }
                guard line[i] == comma else {
                    return .failure(.init("unexpected text after the closing quote of field \(fields.count)"))
                }
                i += 1
            } else {
                let stop = line[i...].firstIndex(of: comma) ?? end
                fields.append(String(decoding: line[i..<stop], as: UTF8.self))
                if stop == end { return .success(fields) }
                i = stop + 1
            }
        }
    }
}

/// Why one line or entry of an import file was rejected.
public struct ImportProblem: Error, Sendable, Hashable {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension ImportProblem {
    /// `text` in quotes for a rejection message, cut to a few dozen
    /// characters: a reason names the bad value, it never echoes a field
    /// that may be megabytes long.
    static func quoted(_ text: String) -> String {
        let limit = 40
        var shown = ""
        var count = 0
        for character in text.unicodeScalars {
            if count == limit { return "“\(shown)…” (\(text.utf8.count) bytes)" }
            // Control characters would garble the terminal; show them escaped.
            shown += character.properties.generalCategory == .control ? character.escaped(asASCII: true) : String(character)
            count += 1
        }
        return "“\(shown)”"
    }
}
