/// A listener's name on the service their listening comes from: a Last.fm
/// username (`rj`), or a ListenBrainz one written with `lb:` before it
/// (`lb:rob`).
///
/// Last.fm usernames are 2–15 characters long, start with a letter, and then
/// contain letters, digits, `_` or `-`. ListenBrainz names (MusicBrainz
/// account names, which allow nearly anything) are accepted when they are
/// 1–64 characters of ASCII letters, digits, `_`, `-` and `.`, not starting
/// with `.`: every such name is safe, unescaped, in a URL path segment
/// (`/u/lb:rob`), a file name and a terminal; anyone else cannot be added.
/// The `lb:` stays in `value` and `key`, so `lb:rob` and Last.fm's `rob` are
/// two people everywhere names are keys (lists, the archive, caches).
///
/// Two usernames are equal when they differ only in case; the value keeps
/// the casing it was created with, so a name confirmed by Last.fm keeps
/// Last.fm's canonical spelling.
public struct Username: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The name as it should be shown (Last.fm's casing once confirmed).
    public let value: String
    /// The case-folded form used for equality, hashing and storage keys.
    public let key: String

    /// Why a string is not a valid username.
    public enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case tooShort
        case tooLong
        case mustStartWithLetter
        case invalidCharacter(Character)
        /// `lb:` with a name that is empty, too long, starts with `.` or
        /// holds a character outside the accepted set.
        case listenBrainzName(Character?)

        public var description: String {
            switch self {
            case .empty: "A username is required."
            case .tooShort: "Last.fm usernames are at least 2 characters long."
            case .tooLong: "Last.fm usernames are at most 15 characters long."
            case .mustStartWithLetter: "Last.fm usernames start with a letter."
            case .invalidCharacter(let c):
                "Last.fm usernames contain only letters, digits, “_” and “-”, not “\(c)”."
            case .listenBrainzName(let c?):
                "ListenBrainz names after “lb:” contain only letters, digits, “_”, “-” and “.” (not first), not “\(c)”."
            case .listenBrainzName(nil):
                "A ListenBrainz name after “lb:” is 1 to 64 characters long."
            }
        }
    }

    /// What `lb:` before a name means.
    public static let listenBrainzPrefix = "lb:"

    /// The service this listener's name belongs to.
    public var service: ListeningService { key.hasPrefix(Self.listenBrainzPrefix) ? .listenBrainz : .lastFM }

    /// The name as the service itself knows it (`rob` for `lb:rob`), for
    /// its API; never a key.
    public var serviceName: String {
        service == .listenBrainz ? String(value.dropFirst(Self.listenBrainzPrefix.count)) : value
    }

    /// Validates `raw` (surrounding whitespace is ignored).
    public init(_ raw: String) throws(Invalid) {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        if trimmed.lowercased().hasPrefix(Self.listenBrainzPrefix) {
            let name = trimmed.unicodeScalars.dropFirst(Self.listenBrainzPrefix.count)
            guard (1...64).contains(name.count) else { throw .listenBrainzName(nil) }
            for (i, s) in name.enumerated()
            where !(s.isASCIILetter || s.isASCIIDigit || s == "_" || s == "-" || (s == "." && i > 0)) {
                throw .listenBrainzName(Character(s))
            }
            self.value = Self.listenBrainzPrefix + String(String.UnicodeScalarView(name))
            self.key = value.lowercased()
            return
        }
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
        // Nearly every name has nothing to trim: no copy then, and when it
        // starts and ends with visible ASCII, not even a look at Unicode's
        // tables (a Character is whitespace by its first scalar; one that
        // ends in visible ASCII is not whitespace).
        if let head = utf8.first, let tail = utf8.last, head > 0x20, head < 0x7F, tail > 0x20, tail < 0x7F { return self }
        guard let first, let last, first.isWhitespace || last.isWhitespace else { return self }
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
