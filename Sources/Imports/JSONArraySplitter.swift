/// Cuts a top-level JSON array into its elements as bytes arrive, without
/// holding more than one element: the streaming half of a JSON array import.
///
/// It tracks only strings, escapes and bracket depth; each element's bytes
/// are then decoded on their own, so one malformed element is reported and
/// the next one still imports.
struct JSONArraySplitter {
    enum Event {
        /// One element's bytes and the line it starts on.
        case element([UInt8], line: Int)
        /// A problem with the array's structure, at a line.
        case problem(String, line: Int)
    }

    private enum State { case seekingKey, beforeArray, expectElement, inElement, afterElement, done }

    /// For an array inside a top-level object (Maloja's `"scrobbles"`):
    /// the key, and what the scan of the object before it has seen.
    private struct KeySeek {
        let key: [UInt8]
        var depth = 0
        var inString = false
        var escaped = false
        var string: [UInt8] = []
        var lastString: [UInt8]?
        var afterColon = false
    }
    private var seek: KeySeek?

    private var state = State.beforeArray
    private var line = 1
    private var element: [UInt8] = []
    private var elementLine = 1
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var reportedTrailing = false
    private var sawComma = false
    /// Bytes of the current element, counted on past the limit.
    private var elementBytes = 0
    /// 16 MiB, as for a line: an element over it is reported, never held whole.
    static let maxElementBytes = LineSplitter.maxLineLength

    init() {}

    /// Splits the array that is the value of `key` in the top-level object;
    /// the rest of the object is skipped.
    init(arrayAtKey key: String) {
        seek = KeySeek(key: Array(key.utf8))
        state = .seekingKey
    }

    mutating func feed(_ chunk: [UInt8], _ emit: (Event) throws -> Void) rethrows {
        for byte in chunk {
            if byte == UInt8(ascii: "\n") { line += 1 }
            switch state {
            case .seekingKey:
                try seekKey(byte, emit)
            case .beforeArray:
                // The importer has already skipped a byte-order mark.
                if Self.isSpace(byte) { continue }
                if byte == UInt8(ascii: "[") { state = .expectElement; continue }
                try emit(.problem("the file is not a JSON array", line: line))
                state = .done
            case .expectElement, .afterElement:
                if Self.isSpace(byte) { continue }
                if byte == UInt8(ascii: "]") {
                    if state == .expectElement, sawComma { try emit(.problem("trailing comma before the end of the array", line: line)) }
                    state = .done
                    continue
                }
                if byte == UInt8(ascii: ",") {
                    if state == .expectElement { try emit(.problem("empty element", line: line)) }
                    state = .expectElement
                    sawComma = true
                    continue
                }
                if state == .afterElement {
                    try emit(.problem("missing comma between elements", line: line))
                }
                startElement(byte)
            case .inElement:
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    append(byte)
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true; append(byte)
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; append(byte)
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 {
                        // The closing bracket of the whole array.
                        try finishElement(emit)
                        state = .done
                        continue
                    }
                    depth -= 1
                    append(byte)
                    if depth == 0 { try finishElement(emit); state = .afterElement }
                case UInt8(ascii: ",") where depth == 0:
                    try finishElement(emit)
                    state = .expectElement
                    sawComma = true
                default:
                    append(byte)
                }
            case .done:
                if seek == nil, !Self.isSpace(byte), !reportedTrailing {
                    reportedTrailing = true
                    try emit(.problem("text after the end of the JSON array", line: line))
                }
            }
        }
    }

    /// Reports an array left open at the end of the file.
    mutating func finish(_ emit: (Event) throws -> Void) rethrows {
        switch state {
        case .done: return
        case .seekingKey:
            let key = String(decoding: seek?.key ?? [], as: UTF8.self)
            try emit(.problem("the file has no \"\(key)\" list of scrobbles", line: line))
        case .beforeArray: try emit(.problem("the file is empty", line: line))
        case .inElement:
            try emit(.problem("the file ends inside an element (unterminated string or object)", line: elementLine))
        case .expectElement, .afterElement:
            try emit(.problem("the file ends before the JSON array is closed", line: line))
        }
        state = .done
    }

    /// Scans the top-level object for `"key": [`, skipping every other value.
    private mutating func seekKey(_ byte: UInt8, _ emit: (Event) throws -> Void) rethrows {
        guard var s = seek else { return }
        defer { if state == .seekingKey { seek = s } }
        if s.inString {
            if s.escaped { s.escaped = false } else if byte == UInt8(ascii: "\\") { s.escaped = true } else if byte == UInt8(ascii: "\"") {
                s.inString = false
                s.lastString = s.depth == 1 ? s.string : nil
            } else if s.depth == 1, s.string.count <= s.key.count {
                s.string.append(byte)
            }
            return
        }
        if Self.isSpace(byte) { return }
        if s.afterColon {
            s.afterColon = false
            if byte == UInt8(ascii: "[") {
                state = .expectElement
                return
            }
            try emit(.problem("\"\(String(decoding: s.key, as: UTF8.self))\" is not a list", line: line))
            state = .done
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            s.inString = true
            s.string.removeAll(keepingCapacity: true)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            if s.depth == 0, byte == UInt8(ascii: "[") {
                try emit(.problem("the file is a JSON array, not an object", line: line))
                state = .done
                return
            }
            s.depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            s.depth -= 1
        case UInt8(ascii: ":"):
            if s.depth == 1, s.lastString == s.key { s.afterColon = true }
        default:
            break
        }
        if byte != UInt8(ascii: ":") { s.lastString = nil }
        if s.depth < 0 { state = .done }
    }

    private mutating func startElement(_ byte: UInt8) {
        state = .inElement
        element.removeAll(keepingCapacity: true)
        elementBytes = 1
        elementLine = line
        depth = 0
        inString = false
        escaped = false
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth = 1
        default: break
        }
        element.append(byte)
    }

    private mutating func append(_ byte: UInt8) {
        elementBytes += 1
        if elementBytes <= Self.maxElementBytes { element.append(byte) }
    }

    private mutating func finishElement(_ emit: (Event) throws -> Void) rethrows {
        if elementBytes > Self.maxElementBytes {
            try emit(.problem("the element is \(elementBytes) bytes long, over the \(Self.maxElementBytes >> 20) MiB limit for one element",
                              line: elementLine))
        } else {
            try emit(.element(element, line: elementLine))
        }
        // Give back a huge element's buffer rather than keep 16 MiB for good.
        element.removeAll(keepingCapacity: element.count <= 1 << 20)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
