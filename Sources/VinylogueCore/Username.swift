/// A Last.fm username, validated against Last.fm's rules.
///
/// Last.fm usernames are 2–15 characters long, start with a letter, and then
/// contain letters, digits, `_` or `-`. Two usernames are equal when they
/// differ only in case; the value keeps the casing it was created with, so a
/// name confirmed by Last.fm keeps Last.fm's canonical spelling.
public struct Username: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The name as it should be shown (Last.fm's casing once confirmed).
    public let value: String
    /// The case-folded form used for equality, hashing and storage keys.
    public let key: String

    /// Why a string is not a valid Last.fm username.
    public enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case tooShort
        case tooLong
        case mustStartWithLetter
        case invalidCharacter(Character)

        public var description: String {
            switch self {
            case .empty: "A username is required."
            case .tooShort: "Last.fm usernames are at least 2 characters long."
            case .tooLong: "Last.fm usernames are at most 15 characters long."
            case .mustStartWithLetter: "Last.fm usernames start with a letter."
            case .invalidCharacter(let c):
                "Last.fm usernames contain only letters, digits, “_” and “-”, not “\(c)”."
            }
        }
    }

    /// Validates `raw` (surrounding whitespace is ignored).
    public init(_ raw: String) throws(Invalid) {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        let scalars = trimmed.unicodeScalars
        guard scalars.count >= 2 else { throw .tooShort }
        guard scalars.count <= 15 else { throw .tooLong }
        guard let first = scalars.first, first.isASCIILetter else { throw .mustStartWithLetter }
        for s in scalars.dropFirst() where !(s.isASCIILetter || s.isASCIIDigit || s == "_" || s == "-") {
            throw .invalidCharacter(Character(s))
        }
        self.value = trimmed
        self.key = trimmed.lowercased()
    }

    /// Returns `nil` instead of throwing.
    public init?(validating raw: String) {
        guard let name = try? Username(raw) else { return nil }
        self = name
    }

    public static func == (lhs: Username, rhs: Username) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
    public static func < (lhs: Username, rhs: Username) -> Bool { lhs.key < rhs.key }
    public var description: String { value }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        do { self = try Username(raw) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension String {
    /// The string without leading and trailing whitespace and newlines.
    public func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
