import Foundation
import NIOCore
import Testing

@testable import Mail

/// A rendered message read back: unfolded headers and the body.
struct ReadMessage {
    var headers: [(name: String, value: String)]
    var body: String

    init(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let split = text.range(of: "\r\n\r\n")!
        body = String(text[split.upperBound...])
        let unfolded = text[..<split.lowerBound].replacingOccurrences(of: "\r\n ", with: " ")
        headers = unfolded.components(separatedBy: "\r\n").map { line in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }

    func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    func value(_ name: String) -> String? { values(name).first }

    /// The MIME parts between `boundary` delimiters (RFC 2046 §5.1.1).
    func parts(boundary: String) -> [ReadMessage] {
        let delimited = ("\r\n" + body).components(separatedBy: "\r\n--\(boundary)")
        // Before the first delimiter: the preamble; after the last one: "--" and the epilogue.
        #expect(delimited.last?.hasPrefix("--") == true)
        return delimited.dropFirst().dropLast().map { part in
            #expect(part.hasPrefix("\r\n"))
            return ReadMessage(Array(part.utf8.dropFirst(2)))
        }
    }
}

/// Quoted-printable decoding, the inverse of `QuotedPrintable.encode`,
/// with its line-length rule checked on the way.
func decodeQuotedPrintable(_ text: String) -> String {
    var output: [UInt8] = []
    let lines = text.components(separatedBy: "\r\n")
    for (index, line) in lines.enumerated() {
        #expect(line.utf8.count <= 76, "A quoted-printable line of \(line.utf8.count) characters")
        #expect(!line.hasSuffix(" ") && !line.hasSuffix("\t"), "Whitespace at the end of an encoded line")
        var bytes = Array(line.utf8)
        let soft = bytes.last == UInt8(ascii: "=")
        if soft { bytes.removeLast() }
        var position = 0
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: "="), position + 2 < bytes.count {
                let hex = String(decoding: bytes[(position + 1)...(position + 2)], as: UTF8.self)
                output.append(UInt8(hex, radix: 16)!)
                position += 3
            } else {
                #expect(bytes[position] != UInt8(ascii: "="))
                output.append(bytes[position])
                position += 1
            }
        }
        if !soft, index < lines.count - 1 { output += [13, 10] }
    }
    return String(decoding: output, as: UTF8.self)
}

/// The text of `=?UTF-8?B?…?=` words separated by folding whitespace.
func decodeEncodedWords(_ value: String) -> String {
    var bytes: [UInt8] = []
    for word in value.split(separator: " ") {
        #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="))
        #expect(word.count <= 75)
        bytes += Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))!
    }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite struct MailMessageTests {
    let from = MailAddress("charts@vinylogue.test")!
    let to = MailAddress("listener@example.org")!
    // Tue, 03 Mar 2026 09:05:00 UTC
    let date = Date(timeIntervalSince1970: 1_772_528_700)

    func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
    }

    @Test func writesTheHeadersWithCRLFAndShortLines() throws {
        let message = MailMessage(
            from: from, fromName: "Vinylogue", to: to, subject: "Your week in music", date: date,
            messageID: "<abc123@vinylogue.test>", text: "Hello\nthere\r\nand\rhere"
        )
        let bytes = message.rendered()
        #expect(bytes.allSatisfy { $0 < 128 })
        for (index, byte) in bytes.enumerated() {
            if byte == 10 { #expect(index > 0 && bytes[index - 1] == 13) }
            if byte == 13 { #expect(index + 1 < bytes.count && bytes[index + 1] == 10) }
        }
        #expect(bytes.suffix(2) == [13, 10])
        #expect(lines(bytes).allSatisfy { $0.utf8.count <= 998 })
        let read = ReadMessage(bytes)
        #expect(read.headers.map(\.name) == [
            "Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
        ])
        #expect(read.value("Date") == "Tue, 03 Mar 2026 09:05:00 +0000")
        #expect(read.value("From") == "Vinylogue <charts@vinylogue.test>")
        #expect(read.value("To") == "listener@example.org")
        #expect(read.value("Subject") == "Your week in music")
        #expect(read.value("Message-ID") == "<abc123@vinylogue.test>")
        #expect(read.value("MIME-Version") == "1.0")
        #expect(read.value("Content-Type") == "text/plain; charset=utf-8")
        #expect(read.value("Content-Transfer-Encoding") == "quoted-printable")
        #expect(decodeQuotedPrintable(read.body) == "Hello\r\nthere\r\nand\r\nhere\r\n")
    }

    @Test func rendersTheSameBytesEveryTime() {
        let message = MailMessage(from: from, to: to, subject: "Same", text: "a", html: "<p>a</p>")
        #expect(message.rendered() == message.rendered())
        #expect(message.messageID.hasPrefix("<") && message.messageID.hasSuffix("@vinylogue.test>"))
        #expect(MailMessage(from: from, to: to, subject: "Same", text: "a").messageID != message.messageID)
    }

    @Test func encodesANonASCIISubjectAsFoldedEncodedWords() {
        let subject = "Ta semaine en musique — Sigur Rós, Björk, 東京事変 et 🎧🎶 : 42 écoutes, trois découvertes, un album retrouvé"
        let message = MailMessage(from: from, to: to, subject: subject, date: date, text: "x")
        let bytes = message.rendered()
        let headerBlock = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        #expect(headerBlock.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        let value = ReadMessage(bytes).value("Subject")!
        #expect(value.split(separator: " ").count > 2)
        #expect(decodeEncodedWords(value) == subject)
    }

    @Test func foldsALongASCIISubjectAtSpaces() {
        let subject = (1...30).map { "word\($0)" }.joined(separator: " ")
        let bytes = MailMessage(from: from, to: to, subject: subject, text: "x").rendered()
        let headerLines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
        #expect(headerLines.allSatisfy { $0.utf8.count <= 78 })
        #expect(headerLines.contains { $0.hasPrefix(" word") })
        #expect(ReadMessage(bytes).value("Subject") == subject)
    }

    @Test(arguments: [
        ("Vinylogue", "Vinylogue <charts@vinylogue.test>"),
        ("Vinylogue, Charts", "\"Vinylogue, Charts\" <charts@vinylogue.test>"),
        ("The \"Best\" Charts", "\"The \\\"Best\\\" Charts\" <charts@vinylogue.test>"),
    ])
    func writesTheSenderName(name: String, header: String) {
        let read = ReadMessage(MailMessage(from: from, fromName: name, to: to, subject: "s", text: "x").rendered())
        #expect(read.value("From") == header)
    }

    @Test func encodesANonASCIISenderName() throws {
        let read = ReadMessage(MailMessage(from: from, fromName: "Éditions Vinylogue", to: to, subject: "s", text: "x").rendered())
        let value = try #require(read.value("From"))
        #expect(value.hasSuffix(" <charts@vinylogue.test>"))
        #expect(decodeEncodedWords(String(value.dropLast(" <charts@vinylogue.test>".count))) == "Éditions Vinylogue")
    }

    @Test func noValueCanInjectAHeader() {
        let message = MailMessage(
            from: from, fromName: "Eve\r\nBcc: victim@example.org", to: to,
            subject: "Hello\r\nBcc: victim@example.org", date: date, messageID: "<id@x>\r\nBcc: victim@example.org",
            text: "body",
            extraHeaders: [
                ("X-Campaign", "weekly\r\nBcc: victim@example.org"),
                ("X-Lone-LF", "weekly\nBcc: victim@example.org\rCc: other@example.org"),
                ("Bcc", "victim@example.org"),
                ("X-Evil\r\nBcc", "victim@example.org"),
                ("Content-Type", "text/html"),
                ("X Space", "no"),
            ]
        )
        let bytes = message.rendered()
        let headerBlock = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        for line in headerBlock.components(separatedBy: "\r\n") {
            #expect(!line.lowercased().hasPrefix("bcc"), "Injected: \(line)")
            #expect(!line.lowercased().hasPrefix("cc"), "Injected: \(line)")
        }
        #expect(!headerBlock.contains("\n\r") && !headerBlock.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(!headerBlock.replacingOccurrences(of: "\r\n", with: "").contains("\r"))
        let read = ReadMessage(bytes)
        #expect(read.value("X-Campaign") == "weekly Bcc: victim@example.org")
        #expect(read.values("Content-Type") == ["text/plain; charset=utf-8"])
        #expect(read.value("X Space") == nil)
        #expect(read.values("Bcc").isEmpty)
    }

    @Test func keepsLongHeaderValuesWithinTheLineLimit() throws {
        let url = "https://vinylogue.test/unsubscribe?token=" + String(repeating: "a1B2", count: 70)
        let huge = String(repeating: "x", count: 2500)
        let message = MailMessage(
            from: from, to: to, subject: "s", text: "x",
            extraHeaders: [
                ("List-Unsubscribe", "<\(url)>, <mailto:unsubscribe@vinylogue.test?subject=unsubscribe>"),
                ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
                ("X-Huge", huge),
            ]
        )
        let bytes = message.rendered()
        #expect(lines(bytes).allSatisfy { $0.utf8.count <= 998 })
        let read = ReadMessage(bytes)
        #expect(read.value("List-Unsubscribe") == "<\(url)>, <mailto:unsubscribe@vinylogue.test?subject=unsubscribe>")
        #expect(read.value("List-Unsubscribe-Post") == "List-Unsubscribe=One-Click")
        #expect(read.value("X-Huge")?.replacingOccurrences(of: " ", with: "") == huge)
    }

    @Test func sendsHTMLAsTheSecondPartOfAnAlternative() throws {
        let text = "Your week:\n1. Björk — Homogenic\n.\n.. and more"
        let html = "<p>Your week:</p>\r\n<ol><li>Björk — Homogenic</li></ol>\n<p style=\"color: red\">=</p>"
        let message = MailMessage(from: from, to: to, subject: "s", date: date, text: text, html: html)
        let bytes = message.rendered()
        #expect(bytes.allSatisfy { $0 < 128 })
        let read = ReadMessage(bytes)
        let contentType = try #require(read.value("Content-Type"))
        #expect(contentType == "multipart/alternative; boundary=\"\(message.boundary)\"")
        #expect(read.value("Content-Transfer-Encoding") == nil)
        #expect(read.body.hasPrefix("--\(message.boundary)\r\n"))
        #expect(read.body.hasSuffix("\r\n--\(message.boundary)--\r\n"))
        let parts = read.parts(boundary: message.boundary)
        #expect(parts.count == 2)
        guard parts.count == 2 else { return }
        #expect(parts[0].value("Content-Type") == "text/plain; charset=utf-8")
        #expect(parts[0].value("Content-Transfer-Encoding") == "quoted-printable")
        #expect(parts[1].value("Content-Type") == "text/html; charset=utf-8")
        #expect(parts[1].value("Content-Transfer-Encoding") == "quoted-printable")
        #expect(decodeQuotedPrintable(parts[0].body) == text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(decodeQuotedPrintable(parts[1].body) == html.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n"))
        // Dot lines stay in the body as they are; SMTP's dot-stuffing is the client's business.
        #expect(lines(bytes).contains("."))
    }

    @Test func carriesInlineImagesBesideTheHTML() throws {
        var message = MailMessage(from: from, to: to, subject: "s", date: date, text: "text", html: "<img src=\"cid:cover-1@v\">")
        let png = Data([0x89, 0x50, 0x4E, 0x47] + Array(repeating: 0xAB, count: 200))
        message.inlineImages = [MailMessage.InlineImage(contentID: "cover-1@v", contentType: "image/png", bytes: png),
                                MailMessage.InlineImage(contentID: "bad id>\r\nBcc: x", contentType: "image/png", bytes: png),
                                MailMessage.InlineImage(contentID: "ok@v", contentType: "text/html", bytes: png)]
        let bytes = message.rendered()
        let read = ReadMessage(bytes)
        let parts = read.parts(boundary: message.boundary)
        #expect(parts.count == 2)
        guard parts.count == 2 else { return }
        let related = try #require(parts[1].value("Content-Type"))
        let inner = try #require(related.firstMatch(of: /boundary="([^"]+)"/)?.1)
        #expect(related.hasPrefix("multipart/related;") && related.hasSuffix("type=\"text/html\""))
        // Found by a hostile review: the inner boundary began with the outer one, which RFC 2046 forbids
        // (a parser matching delimiters by prefix cut the HTML and images apart).
        #expect(!inner.hasPrefix(message.boundary) && !message.boundary.hasPrefix(String(inner)))
        let outerLines = lines(bytes).filter { $0.hasPrefix("--" + message.boundary) }
        #expect(outerLines == ["--" + message.boundary, "--" + message.boundary, "--" + message.boundary + "--"])
        let images = parts[1].parts(boundary: String(inner)).dropFirst()
        // Only the image whose id and type can be written goes in.
        #expect(images.count == 1)
        let image = try #require(images.first)
        #expect(image.value("Content-ID") == "<cover-1@v>" && image.value("Content-Type") == "image/png")
        #expect(image.value("Content-Transfer-Encoding") == "base64")
        #expect(Data(base64Encoded: image.body.replacingOccurrences(of: "\r\n", with: "")) == png)
        #expect(lines(bytes).allSatisfy { $0.utf8.count <= 998 })
    }

    @Test func stuffsDotsForDATA() {
        let message = MailMessage(from: from, to: to, subject: "s", text: ".\n..\n.x\nx.\n.")
        let rendered = message.rendered()
        let payload = SMTPClient.dataPayload(rendered)
        let sent = String(decoding: payload.readableBytesView, as: UTF8.self)
        #expect(sent.hasSuffix("\r\n.\r\n"))
        var sentLines = sent.components(separatedBy: "\r\n")
        #expect(sentLines.removeLast() == "")
        #expect(sentLines.removeLast() == ".")
        #expect(!sentLines.contains("."))
        let unstuffed = sentLines.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }
        #expect(Array((unstuffed.joined(separator: "\r\n") + "\r\n").utf8) == rendered)
    }
}

@Suite struct QuotedPrintableTests {
    func encoded(_ text: String) -> String {
        String(decoding: QuotedPrintable.encode(text), as: UTF8.self)
    }

    @Test func encodesWhatMustBeEncoded() {
        #expect(encoded("a=b") == "a=3Db")
        #expect(encoded("café") == "caf=C3=A9")
        #expect(encoded("trailing \nspace\t") == "trailing=20\r\nspace=09")
        #expect(encoded("inner space stays") == "inner space stays")
        #expect(encoded("a\rb\nc\r\nd") == "a\r\nb\r\nc\r\nd")
        #expect(encoded("bell\u{7}") == "bell=07")
    }

    @Test func breaksLongLinesSoftly() {
        let line = String(repeating: "abcdefghij", count: 20)
        let result = encoded(line)
        let lines = result.components(separatedBy: "\r\n")
        #expect(lines.count == 3)
        #expect(lines.dropLast().allSatisfy { $0.utf8.count == 76 && $0.hasSuffix("=") })
        #expect(decodeQuotedPrintable(result) == line)
        // A line of exactly 76 needs no soft break.
        #expect(encoded(String(repeating: "x", count: 76)) == String(repeating: "x", count: 76))
        #expect(encoded(String(repeating: "x", count: 77)).components(separatedBy: "\r\n").count == 2)
    }

    @Test func neverSplitsAnEscape() {
        for length in 70...80 {
            let text = String(repeating: "a", count: length - 70) + String(repeating: "é", count: 30)
            let result = encoded(text)
            #expect(decodeQuotedPrintable(result) == text)
        }
    }

    @Test func roundTripsArbitraryText() {
        var generator = SeededGenerator(seed: 20260303)
        let alphabet: [Character] = Array("ab =\t.-é東🎧\n\r") + [" ", " ", "x", "y", "z"]
        for _ in 0..<300 {
            let length = Int(generator.next() % 400)
            let text = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            let normalised = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
                .replacingOccurrences(of: "\n", with: "\r\n")
            #expect(decodeQuotedPrintable(encoded(text)) == normalised)
        }
    }
}

/// A small deterministic generator (SplitMix64), so failures repeat.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
