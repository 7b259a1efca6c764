import Foundation

/// One email to one recipient: the envelope's addresses, the headers, and a
/// plain-text body with an optional HTML alternative.
///
/// `rendered()` turns it into the RFC 5322 / MIME octets SMTP's `DATA`
/// carries: CRLF line endings, headers folded, non-ASCII text as encoded
/// words, bodies quoted-printable in UTF-8. It is the same every time for
/// the same value (the multipart boundary is chosen once, in `init`).
public struct MailMessage: Sendable {
    /// The sender, in `From:` and `MAIL FROM`.
    public var from: MailAddress
    /// The name shown beside the sender's address, if any.
    public var fromName: String?
    /// The recipient, in `To:` and `RCPT TO`.
    public var to: MailAddress
    /// Any Unicode; encoded as needed.
    public var subject: String
    /// The `Date:` header, written in UTC.
    public var date: Date
    /// The `Message-ID:` header, `<unique@host>`.
    public var messageID: String
    /// The plain-text body; always sent.
    public var text: String
    /// An HTML body sent beside the text as `multipart/alternative`.
    public var html: String?
    /// Further headers, in order (`List-Unsubscribe`, …). Line breaks in a
    /// value become spaces; a name that is not a valid field name, or that
    /// names a header this type writes itself (`From`, `Content-Type`, `Bcc`,
    /// …), is left out.
    public var extraHeaders: [(name: String, value: String)]
    /// Images the HTML shows by `cid:` address, carried in the message
    /// (`multipart/related` around the HTML): shown without fetching
    /// anything. Left out when there is no HTML.
    public var inlineImages: [InlineImage] = []
    /// The MIME boundary between the text and HTML parts; it cannot occur
    /// in quoted-printable text (`=_` never does).
    public let boundary: String

    public init(
        from: MailAddress, fromName: String? = nil, to: MailAddress, subject: String,
        date: Date = Date(), messageID: String? = nil, text: String, html: String? = nil,
        extraHeaders: [(name: String, value: String)] = []
    ) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.date = date
        self.messageID = messageID ?? Self.newMessageID(domain: from.domain)
        self.text = text
        self.html = html
        self.extraHeaders = extraHeaders
        self.boundary = "=_" + Self.randomHex(bytes: 16)
    }

    /// An image carried in the message for the HTML to show.
    public struct InlineImage: Sendable, Equatable {
        /// Its `Content-ID` without angle brackets: the HTML's `cid:` address.
        public let contentID: String
        /// `image/jpeg`, `image/png`, …
        public let contentType: String
        public let bytes: Data

        public init(contentID: String, contentType: String, bytes: Data) {
            self.contentID = contentID
            self.contentType = contentType
            self.bytes = bytes
        }

        /// Whether its id and type can be written into headers as they are.
        var isWritable: Bool {
            !contentID.isEmpty && contentID.utf8.count <= 200
                && contentID.utf8.allSatisfy { $0 < 128 && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber
                    || "@.-_".utf8.contains($0)) }
                && contentType.split(separator: "/").count == 2 && contentType.hasPrefix("image/")
                && contentType.utf8.allSatisfy { $0 < 128 && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber
                    || "/.+-".utf8.contains($0)) }
        }
    }

    /// A fresh `<random@domain>` message ID.
    public static func newMessageID(domain: String) -> String {
        "<\(randomHex(bytes: 16))@\(domain)>"
    }

    /// The headers this type writes itself, which `extraHeaders` cannot repeat or override.
    static let ownHeaderNames: Set<String> = [
        "date", "from", "sender", "reply-to", "to", "cc", "bcc", "subject", "message-id", "mime-version",
        "content-type", "content-transfer-encoding", "content-disposition", "return-path",
    ]

    /// The whole message as `DATA` carries it (before dot-stuffing), ending in CRLF.
    public func rendered() -> [UInt8] {
        var head = ""
        head += "Date: \(Self.rfc5322Date(date))\r\n"
        head += HeaderField.mailbox("From", address: from, displayName: fromName).rendered()
        head += HeaderField.mailbox("To", address: to, displayName: nil).rendered()
        head += HeaderField.text("Subject", subject).rendered()
        head += HeaderField.text("Message-ID", messageID).rendered()
        head += "MIME-Version: 1.0\r\n"
        for (name, value) in extraHeaders where Self.isAcceptableExtraName(name) {
            head += HeaderField.text(name, value).rendered()
        }

        var output: [UInt8] = []
        let textPart = Self.bodyPart(text, type: "text/plain")
        guard let html else {
            output += Array(head.utf8)
            output += textPart
            return output
        }
        head += "Content-Type: multipart/alternative; boundary=\"\(boundary)\"\r\n"
        output += Array(head.utf8)
        output += Array("\r\n--\(boundary)\r\n".utf8)
        output += textPart
        output += Array("--\(boundary)\r\n".utf8)
        let images = inlineImages.filter(\.isWritable)
        if images.isEmpty {
            output += Self.bodyPart(html, type: "text/html")
        } else {
            // The HTML and the images it shows, as one alternative.
            // Not the outer boundary with more after it: a delimiter must
            // not begin another boundary's (RFC 2046 5.1.1).
            let related = "=_r" + boundary.dropFirst(2)
            output += Array("Content-Type: multipart/related; boundary=\"\(related)\";\r\n type=\"text/html\"\r\n\r\n".utf8)
            output += Array("--\(related)\r\n".utf8)
            output += Self.bodyPart(html, type: "text/html")
            for image in images {
                output += Array("--\(related)\r\n".utf8)
                output += Self.imagePart(image)
            }
            output += Array("--\(related)--\r\n".utf8)
        }
        output += Array("--\(boundary)--\r\n".utf8)
        return output
    }

    /// An inline image part: its headers, a blank line, and its bytes in
    /// base64 lines of 76 characters, ending in CRLF.
    private static func imagePart(_ image: InlineImage) -> [UInt8] {
        let name = image.contentID.prefix { $0 != "@" }
        let fileExtension = image.contentType.split(separator: "/").last.map { $0 == "jpeg" ? "jpg" : String($0) } ?? "img"
        var part = Array(("Content-Type: \(image.contentType)\r\nContent-Transfer-Encoding: base64\r\n"
            + "Content-ID: <\(image.contentID)>\r\nContent-Disposition: inline; filename=\"\(name).\(fileExtension)\"\r\n\r\n").utf8)
        let encoded = Array(image.bytes.base64EncodedString().utf8)
        var start = 0
        while start < encoded.count {
            let end = min(start + 76, encoded.count)
            part += encoded[start..<end]
            part += [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
            start = end
        }
        return part
    }

    /// `Content-Type` and `Content-Transfer-Encoding`, a blank line, and the
    /// body quoted-printable, ending in CRLF. Before a boundary that CRLF
    /// belongs to the delimiter, so the part is the text itself.
    private static func bodyPart(_ body: String, type: String) -> [UInt8] {
        var part = Array("Content-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n".utf8)
        part += QuotedPrintable.encode(body)
        part += [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
        return part
    }

    /// A field name of printable ASCII without `:`, not one of ours.
    private static func isAcceptableExtraName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 76
            && name.utf8.allSatisfy { (33...126).contains($0) && $0 != UInt8(ascii: ":") }
            && !ownHeaderNames.contains(name.lowercased())
    }

    /// `Tue, 03 Mar 2026 09:05:00 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(weekdays[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<bytes * 2).map { _ in digits[Int(generator.next() % 16)] })
    }
}
