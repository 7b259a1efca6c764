/// A stable 128-bit FNV-1a hash rendered as 32 lowercase hex digits.
///
/// Swift's `hashValue` is seeded per process, so it cannot name anything that
/// outlives a run (a URL, a file). FNV-1a is tiny, stable and good enough to
/// tell album names apart; it is not meant to resist an adversary.
public struct NameHash: Sendable, Hashable, CustomStringConvertible {
    public let value: UInt128

    static let offsetBasis: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
    static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013b

    /// Hashes the UTF-8 bytes of `text`.
    public init(_ text: String) {
        var hash = Self.offsetBasis
        for byte in text.utf8 {
            hash ^= UInt128(byte)
            hash = hash &* Self.prime
        }
        value = hash
    }

    /// 32 lowercase hex digits, zero-padded.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }

    /// 64 well-mixed bits for seeding a generator.
    public var seed: UInt64 { UInt64(truncatingIfNeeded: value >> 64) ^ UInt64(truncatingIfNeeded: value) }

    public var description: String { hex }
}
