import Foundation
@testable import HTTPServing
@testable import ListenIngest
import Testing
@testable import Web

/// The listen body's JSON reader against what RFC 8259 allows and refuses,
/// and against Foundation's reader on the same documents.
@Suite struct JSONValueTests {
    static func parse(_ text: String) -> JSONValue? { try? JSONValue.parse(Data(text.utf8)) }

    @Test func valuesKeepTheirKind() {
        #expect(Self.parse(#"{"a": [1, -0, 1.5, 2e3, -7E-2, true, false, null, "x"]}"#)
            == .object(["a": .array([.integer(1), .integer(0), .number(1.5), .number(2000), .number(-0.07), .bool(true), .bool(false), .null, .string("x")])]))
        #expect(Self.parse("9223372036854775807") == .integer(.max))
        #expect(Self.parse("9223372036854775808") == .number(9223372036854775808))
        #expect(Self.parse(" \n\t\"\" \r\n") == .string(""))
        #expect(Self.parse(#"{"k": 1, "k": 2}"#) == .object(["k": .integer(2)]))
    }

    @Test func escapesAndUnicodeAreRead() {
        #expect(Self.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(Self.parse(#""\u00e9\u00E9 Sigur R\u00f3s""#) == .string("éé Sigur Rós"))
        #expect(Self.parse(#""\ud83d\udcbf vinyl""#) == .string("💿 vinyl"))
        #expect(Self.parse("\"Björk 💿\"") == .string("Björk 💿"))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "01", "1.", ".5", "-", "+1", "1e", "0x10",
        "tru", "nul", "True", #""unterminated"#, "\"tab\there\"", #""\x""#, #""\u12""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
        "[1] [2]", "1 2", "NaN", "Infinity", "1e999", "\u{FEFF}{}",
    ])
    func malformedDocumentsAreRefused(_ text: String) {
        #expect(Self.parse(text) == nil, "\(text)")
    }

    @Test func invalidUTF8IsRefused() {
        #expect((try? JSONValue.parse(Data([0x22, 0xFF, 0xFE, 0x22]))) == nil)
        #expect((try? JSONValue.parse(Data([0x22, 0xC3, 0x22]))) == nil)
    }

    /// Deep nesting is refused at `maxDepth`, not followed down the stack.
    @Test func nestingStopsAtTheLimit() {
        let fine = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        #expect(Self.parse(fine) != nil)
        let deep = String(repeating: "[", count: JSONValue.maxDepth + 1) + String(repeating: "]", count: JSONValue.maxDepth + 1)
        #expect(Self.parse(deep) == nil)
        #expect(Self.parse(String(repeating: "{\"a\":", count: 100_000)) == nil)
    }

    /// Random documents written by Foundation read back as what was written.
    @Test func foundationsDocumentsReadBack() throws {
        var rng = SystemRandomNumberGenerator()
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &rng) {
            case 0: return Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &rng)
            case 1: return ["Sigur Rós", "quote \" and \\ slash", "tab\tline\n", "💿", "", "\u{01}"].randomElement(using: &rng)!
            case 2: return Bool.random(using: &rng)
            case 3: return NSNull()
            case 4: return (0..<Int.random(in: 0..<4, using: &rng)).map { _ in value(depth + 1) }
            default: return Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<4, using: &rng)).map { ("k\($0)", value(depth + 1)) })
            }
        }
        func expected(_ any: Any) -> JSONValue {
            switch any {
            case let n as Int64: return .integer(n)
            case let b as Bool: return .bool(b)
            case let s as String: return .string(s)
            case let a as [Any]: return .array(a.map(expected))
            case let d as [String: Any]: return .object(JSONValue.Members(d.mapValues(expected)))
            default: return .null
            }
        }
        for _ in 0..<200 {
            let document = ["listen": value(0)]
            let data = try JSONSerialization.data(withJSONObject: document)
            #expect(try JSONValue.parse(data) == expected(document), "\(String(decoding: data, as: UTF8.self))")
        }
    }
}
