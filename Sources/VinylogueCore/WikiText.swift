/// Last.fm wiki text reduced to an allow-list: paragraphs of plain text,
/// emphasis, and links to http(s) addresses. Every other tag is dropped
/// (its text kept), `<script>` and `<style>` lose their content too, and the
/// "Read more on Last.fm" link and licence trailer Last.fm appends are removed.
///
/// Holding text as nodes rather than HTML means a view must escape every
/// piece it writes; nothing from Last.fm is ever passed through verbatim.
public struct WikiText: Sendable, Hashable, Codable {
    /// One run of inline content.
    public enum Inline: Sendable, Hashable, Codable {
        case text(String)
        case emphasis(String)
        case strong(String)
        case link(text: String, href: String)
    }

    /// Paragraphs, each a list of inline runs.
    public let paragraphs: [[Inline]]

    public init(paragraphs: [[Inline]]) { self.paragraphs = paragraphs.filter { !$0.isEmpty } }

    /// The text without markup, paragraphs separated by blank lines.
    public var plainText: String {
        paragraphs.map { runs in
            runs.map {
                switch $0 {
                case .text(let t), .emphasis(let t), .strong(let t): t
                case .link(let t, _): t
                }
            }.joined()
        }.joined(separator: "\n\n")
    }

    public var isEmpty: Bool { paragraphs.isEmpty }

    /// Parses Last.fm's wiki HTML. Returns `nil` when nothing readable is left.
    public static func parse(html: String) -> WikiText? {
        var parser = WikiHTMLParser(source: html)
        let text = WikiText(paragraphs: parser.parse())
        return text.isEmpty ? nil : text
    }
}

/// A small, forgiving tokenizer for the HTML subset Last.fm puts in wikis.
struct WikiHTMLParser {
    let source: String
    private var paragraphs: [[WikiText.Inline]] = []
    private var runs: [WikiText.Inline] = []
    private var buffer = ""
    private var style: Style = .plain
    private var openLink: String?? = nil  // .some(nil): inside an unsafe link
    private var linkText = ""
    private var skipUntil: String?

    enum Style { case plain, emphasis, strong }

    init(source: String) { self.source = source }

    mutating func parse() -> [[WikiText.Inline]] {
        var i = source.startIndex
        while i < source.endIndex {
            let c = source[i]
            if c == "<", let close = source[i...].firstIndex(of: ">") {
                handleTag(String(source[source.index(after: i)..<close]))
                i = source.index(after: close)
                continue
            }
            if skipUntil == nil { append(String(c)) }
            i = source.index(after: i)
        }
        flushText()
        closeParagraph()
        return paragraphs.map(Self.trimmed).filter { !$0.isEmpty }
    }

    private mutating func append(_ s: String) {
        if openLink != nil { linkText += s } else { buffer += s }
    }

    private mutating func handleTag(_ raw: String) {
        let tag = raw.trimmingWhitespace()
        let closing = tag.hasPrefix("/")
        let body = closing ? String(tag.dropFirst()) : tag
        let name = String(body.prefix { $0.isLetter || $0.isNumber }).lowercased()
        if let skip = skipUntil {
            if closing && name == skip { skipUntil = nil }
            return
        }
        switch (name, closing) {
        case ("script", false), ("style", false):
            if !tag.hasSuffix("/") { skipUntil = name }
        case ("p", _), ("br", _), ("div", _):
            flushText(); closeParagraph()
        case ("em", false), ("i", false):
            flushText(); style = .emphasis
        case ("strong", false), ("b", false):
            flushText(); style = .strong
        case ("em", true), ("i", true), ("strong", true), ("b", true):
            flushText(); style = .plain
        case ("a", false):
            flushText()
            openLink = .some(Self.safeHref(in: body))
            linkText = ""
        case ("a", true):
            closeLink()
        default:
            break  // Unknown tags vanish; their text stays.
        }
    }

    private mutating func closeLink() {
        guard let link = openLink else { return }
        let text = Self.decodeEntities(linkText).collapsingWhitespace()
        openLink = nil
        linkText = ""
        if text.lowercased().hasPrefix("read more on last.fm") { return }
        if let href = link, !text.isEmpty {
            runs.append(.link(text: text, href: href))
        } else if !text.isEmpty {
            runs.append(.text(text))
        }
    }

    private mutating func flushText() {
        if openLink != nil { closeLink() }
        guard !buffer.isEmpty else { return }
        var text = Self.decodeEntities(buffer).collapsingWhitespace()
        buffer = ""
        if let range = text.range(of: "User-contributed text is available under the Creative Commons") {
            text = String(text[..<range.lowerBound])
        }
        guard !text.isEmpty else { return }
        switch style {
        case .plain: runs.append(.text(text))
        case .emphasis: runs.append(.emphasis(text.trimmingWhitespace()))
        case .strong: runs.append(.strong(text.trimmingWhitespace()))
        }
    }

    private mutating func closeParagraph() {
        if !runs.isEmpty { paragraphs.append(runs) }
        runs = []
    }

    /// Drops whitespace-only runs at the ends and a lone trailing "." left
    /// behind by the removed "Read more" link.
    static func trimmed(_ runs: [WikiText.Inline]) -> [WikiText.Inline] {
        var runs = runs
        while case .text(let t)? = runs.last, t.trimmingWhitespace().isEmpty || t.trimmingWhitespace() == "." {
            runs.removeLast()
        }
        while case .text(let t)? = runs.first, t.trimmingWhitespace().isEmpty { runs.removeFirst() }
        if case .text(let t)? = runs.first { runs[0] = .text(String(t.drop { $0.isWhitespace })) }
        if case .text(let t)? = runs.last {
            var s = Substring(t)
            while let l = s.last, l.isWhitespace { s.removeLast() }
            runs[runs.count - 1] = .text(String(s))
        }
        return runs
    }

    /// The href of an `<a ...>` tag when it is an absolute http(s) URL.
    static func safeHref(in tagBody: String) -> String? {
        guard let hrefRange = tagBody.range(of: "href", options: .caseInsensitive) else { return nil }
        var rest = tagBody[hrefRange.upperBound...].drop { $0.isWhitespace }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0.isWhitespace }
        let value: Substring
        if let quote = rest.first, quote == "\"" || quote == "'" {
            value = rest.dropFirst().prefix { $0 != quote }
        } else {
            value = rest.prefix { !$0.isWhitespace }
        }
        let href = decodeEntities(String(value)).trimmingWhitespace()
        let lower = href.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return nil }
        guard !href.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "<" || $0 == ">" }) else { return nil }
        return href
    }

    static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == "&", let semi = s[i...].prefix(12).firstIndex(of: ";") {
                let entity = s[s.index(after: i)..<semi]
                if let decoded = decode(entity: entity) {
                    out.append(decoded)
                    i = s.index(after: semi)
                    continue
                }
            }
            out.append(s[i])
            i = s.index(after: i)
        }
        return out
    }

    private static func decode(entity: Substring) -> Character? {
        switch entity {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos", "#39": return "'"
        case "nbsp": return " "
        default:
            if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let v = UInt32(entity.dropFirst(2), radix: 16), let u = Unicode.Scalar(v) {
                return Character(u)
            }
            if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()), let u = Unicode.Scalar(v) {
                return Character(u)
            }
            return nil
        }
    }
}

extension String {
    /// Runs of whitespace (newlines included) become one space.
    func collapsingWhitespace() -> String {
        var out = ""
        var lastWasSpace = false
        for c in self {
            if c.isWhitespace {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
            } else {
                out.append(c)
                lastWasSpace = false
            }
        }
        return out
    }
}
