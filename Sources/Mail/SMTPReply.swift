import NIOCore

/// One SMTP reply (RFC 5321 §4.2): a three-digit code and one or more
/// lines of text, `250-…` lines continuing to the `250 …` that ends it.
struct SMTPReply: Sendable, Equatable {
    var code: Int
    /// Each line's text after the code and its separator.
    var lines: [String]

    /// The lines joined by spaces, as a person reads the reply.
    var text: String { lines.joined(separator: " ").trimmingASCIIWhitespace() }

    /// 4xx or 5xx.
    var isNegative: Bool { (400..<600).contains(code) }
}

/// Turns the bytes from the server into `SMTPReply` values, one line at a
/// time; tolerates bare LF line ends. Bytes it has not turned into a reply
/// yet make `hasUnreadInput` true, which STARTTLS checks is false (RFC 3207 §5:
/// nothing sent before the handshake may be read as if it came after it).
final class SMTPReplyDecoder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = SMTPReply

    /// The longest line accepted (RFC 5321 allows 512; servers' texts run longer).
    static let maximumLineLength = 4096
    /// The most lines one reply may have.
    static let maximumLineCount = 512

    /// Why the server's bytes are not SMTP.
    struct Malformed: Error, Equatable {
        var reason: String
    }

    private var buffer = ByteBuffer()
    private var partialLines: [String] = []
    private var partialCode: Int?
    private var failed = false

    /// Whether bytes were received that are not part of a reply yet, or
    /// the lines of an unfinished one.
    var hasUnreadInput: Bool { buffer.readableBytes > 0 || !partialLines.isEmpty }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        var incoming = unwrapInboundIn(data)
        buffer.writeBuffer(&incoming)
        do {
            while let line = try nextLine() {
                if let reply = try take(line) {
                    context.fireChannelRead(wrapInboundOut(reply))
                }
            }
            buffer.discardReadBytes()
        } catch {
            failed = true
            context.fireErrorCaught(error)
        }
    }

    private func nextLine() throws(Malformed) -> String? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            guard view.count <= Self.maximumLineLength else { throw Malformed(reason: "a line longer than \(Self.maximumLineLength) bytes") }
            return nil
        }
        let length = newline - view.startIndex
        guard length <= Self.maximumLineLength else { throw Malformed(reason: "a line longer than \(Self.maximumLineLength) bytes") }
        var bytes = buffer.readBytes(length: length + 1) ?? []
        bytes.removeLast()
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A whole reply once `line` ends it; `nil` while it goes on.
    private func take(_ line: String) throws(Malformed) -> SMTPReply? {
        let (code, isLast, text) = try Self.parse(line)
        if let partialCode, partialCode != code {
            throw Malformed(reason: "a reply whose lines have different codes (\(partialCode), \(code))")
        }
        partialLines.append(text)
        guard partialLines.count <= Self.maximumLineCount else {
            throw Malformed(reason: "a reply of more than \(Self.maximumLineCount) lines")
        }
        guard isLast else {
            partialCode = code
            return nil
        }
        defer {
            partialLines = []
            partialCode = nil
        }
        return SMTPReply(code: code, lines: partialLines)
    }

    /// `250-text`, `250 text` or `250`: the code, whether the reply ends
    /// here, and the text with control characters dropped.
    static func parse(_ line: String) throws(Malformed) -> (code: Int, isLast: Bool, text: String) {
        let bytes = Array(line.utf8)
        guard bytes.count >= 3,
              (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(bytes[0]),
              bytes[1...2].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else {
            throw Malformed(reason: printable(line.prefix(80)))
        }
        let code = Int(bytes[0] - 48) * 100 + Int(bytes[1] - 48) * 10 + Int(bytes[2] - 48)
        guard bytes.count > 3 else { return (code, true, "") }
        switch bytes[3] {
        case UInt8(ascii: "-"): return (code, false, printable(String(decoding: bytes[4...], as: UTF8.self)))
        case UInt8(ascii: " "): return (code, true, printable(String(decoding: bytes[4...], as: UTF8.self)))
        default: throw Malformed(reason: printable(line.prefix(80)))
        }
    }

    private static func printable(_ text: some StringProtocol) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }
}
