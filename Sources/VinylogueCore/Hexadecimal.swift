/// Bytes as lowercase hexadecimal digits, two a byte: how digests and
/// signatures are written (without `String(format:)`, whose locale-aware
/// formatting cost more than the SHA-256 it printed).
extension Sequence<UInt8> {
    public var lowercaseHex: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
