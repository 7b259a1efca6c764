import Foundation

/// Any JSON value, read without losing which kind it was: a whole number
/// stays apart from a fraction, and neither is read as a boolean.
///
/// `parse(_:)` reads a document straight from its bytes (RFC 8259: one
/// value, UTF-8, no trailing content), at most `maxDepth` arrays and
/// objects deep, so a hostile body can neither recurse the stack away nor
/// cost more than one pass over it. It is what a submitted listen's body is
/// read with: the `Decodable` way tried each kind in turn, and each failed
/// try cost an error with its coding path.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(Members)

    /// An object's members in the order written. A listen's objects have a
    /// handful each: looking one up by going through them is quicker than
    /// hashing every key into a dictionary.
    package struct Members: Sendable, Equatable, ExpressibleByDictionaryLiteral {
        package var pairs: [(key: String, value: JSONValue)]

        package init(_ dictionary: [String: JSONValue]) { pairs = dictionary.map { ($0.key, $0.value) } }
        package init(dictionaryLiteral elements: (String, JSONValue)...) { pairs = elements.map { ($0.0, $0.1) } }
        package init(pairs: [(key: String, value: JSONValue)]) { self.pairs = pairs }

        /// The value of `key`; of the last such member when a key is repeated
        /// (as JSON readers commonly do).
        package subscript(key: String) -> JSONValue? {
            pairs.last { $0.key == key }?.value
        }

        /// The members as a dictionary: what an object means.
        package var dictionary: [String: JSONValue] {
            Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        }

        package static func == (a: Members, b: Members) -> Bool { a.dictionary == b.dictionary }
    }

    /// Why a body is not a JSON document (where, for tests and logs).
    package struct Malformed: Error, Equatable {
        package let offset: Int
    }

    package static let maxDepth = 64

    package static func parse(_ data: Data) throws(Malformed) -> JSONValue {
        var parser = Parser(bytes: [UInt8](data))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw Malformed(offset: parser.index) }
        return value
    }

    private struct Parser {
        package let bytes: [UInt8]
        package var index = 0

        package init(bytes: [UInt8]) { self.bytes = bytes }

        package var malformed: Malformed { Malformed(offset: index) }

        package mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        package mutating func value(depth: Int) throws(Malformed) -> JSONValue {
            guard index < bytes.count else { throw malformed }
            switch bytes[index] {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "{"):
                guard depth < JSONValue.maxDepth else { throw malformed }
                return try object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < JSONValue.maxDepth else { throw malformed }
                return try array(depth: depth + 1)
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw malformed
            }
        }

        package mutating func literal(_ word: String) throws(Malformed) {
            for byte in word.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw malformed }
                index += 1
            }
        }

        package mutating func object(depth: Int) throws(Malformed) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(Members(pairs: members))
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw malformed }
                index += 1
                skipWhitespace()
                members.append((key, try value(depth: depth)))
                skipWhitespace()
                guard index < bytes.count else { throw malformed }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(Members(pairs: members)) }
                throw malformed
            }
        }

        package mutating func array(depth: Int) throws(Malformed) -> JSONValue {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw malformed }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw malformed
            }
        }

        /// A string, from its opening quote; its bytes must be UTF-8.
        package mutating func string() throws(Malformed) -> String {
            index += 1
            let start = index
            // The common case: no escapes, read as one slice; when it is all
            // ASCII it is valid UTF-8 as it stands.
            var ascii = true
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
                ascii = ascii && bytes[index] < 0x80
                index += 1
            }
            guard index < bytes.count else { throw malformed }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                let end = index
                let text = bytes.withUnsafeBufferPointer { buffer in
                    let slice = UnsafeBufferPointer(rebasing: buffer[start..<end])
                    return ascii ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
                }
                guard let text else { throw malformed }
                return text
            }
            var unescaped = Array(bytes[start..<index])
            while true {
                guard index < bytes.count else { throw malformed }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    guard let text = String(validating: unescaped, as: UTF8.self) else { throw malformed }
                    return text
                }
                guard byte >= 0x20 else { throw malformed }
                guard byte == UInt8(ascii: "\\") else {
                    unescaped.append(byte)
                    index += 1
                    continue
                }
                guard index + 1 < bytes.count else { throw malformed }
                index += 2
                switch bytes[index - 1] {
                case UInt8(ascii: "\""): unescaped.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): unescaped.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): unescaped.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { throw malformed }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw malformed }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw malformed
                    }
                    guard let character = Unicode.Scalar(scalar) else { throw malformed }
                    unescaped.append(contentsOf: Array(String(Character(character)).utf8))
                default: throw malformed
                }
            }
        }

        package mutating func hex4() throws(Malformed) -> UInt32 {
            guard index + 4 <= bytes.count else { throw malformed }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw malformed
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }

        /// A number as RFC 8259 writes it: a whole one that fits is an
        /// `integer`, any other a `number`.
        package mutating func number() throws(Malformed) -> JSONValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw malformed }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            var whole = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                whole = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw malformed }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                whole = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw malformed }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if whole, let integer = wholeNumber(from: start, to: index) { return .integer(integer) }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let double = Double(text), double.isFinite else { throw malformed }
            return .number(double)
        }

        /// The whole number written in `bytes[start..<end]` (an optional
        /// minus, then digits), or nil when it does not fit in 64 bits.
        package func wholeNumber(from start: Int, to end: Int) -> Int64? {
            let negative = bytes[start] == UInt8(ascii: "-")
            var value: Int64 = 0
            for byte in bytes[(negative ? start + 1 : start)..<end] {
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let digit = Int64(byte - UInt8(ascii: "0"))
                let (sum, overflowAgain) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                guard !overflow, !overflowAgain else { return nil }
                value = sum
            }
            return value
        }

        package func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }
}
