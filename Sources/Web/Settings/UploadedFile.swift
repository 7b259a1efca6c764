import Foundation
import HTTPServing
import Hummingbird
import MultipartKit
import NIOCore
import Synchronization

/// Why an upload was refused, as the person is told it.
struct UploadRefusal: Error {
    let status: HTTPResponse.Status
    let message: String
}

/// The file of a `multipart/form-data` upload, as an async sequence of its
/// bytes read straight from the request body, never held whole: the form's
/// small fields (the CSRF token, sent before the file by the form) are
/// collected and checked with `checkFields` when the file's part begins,
/// and the whole body may be at most `limit` bytes. A body that ends
/// before its closing boundary is refused as truncated.
///
/// It is read once, by one consumer (the file writer).
struct UploadedFile: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: RequestBody
    let boundary: String
    let limit: Int
    /// Where the parts found so far are told: the file's name, its size.
    let found: FoundParts
    let checkFields: @Sendable ([String: String]) throws -> Void

    /// What the parse has found, for the handler once the file is written.
    final class FoundParts: Sendable {
        private let state = Mutex<(fileName: String?, bytes: Int64, complete: Bool)>((nil, 0, false))
        var fileName: String? { state.withLock { $0.fileName } }
        var bytes: Int64 { state.withLock { $0.bytes } }
        var complete: Bool { state.withLock { $0.complete } }
        func began(file name: String) { state.withLock { $0.fileName = name } }
        func add(_ count: Int) { state.withLock { $0.bytes += Int64(count) } }
        func finished() { state.withLock { $0.complete = true } }
        /// Why the upload was refused while it was read (the file writer
        /// may wrap the error it met in one of its own).
        private let refused = Mutex<(any Error)?>(nil)
        var refusal: (any Error)? { refused.withLock { $0 } }
        func refuse(_ error: any Error) -> any Error {
            refused.withLock { $0 = $0 ?? error }
            return error
        }
    }

    /// The boundary of a `multipart/form-data` content type, nil for any other.
    static func boundary(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() where part.lowercased().hasPrefix("boundary=") {
            var value = String(part.dropFirst("boundary=".count))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(source: body.makeAsyncIterator(), parts: Parts(boundary: boundary), limit: limit, found: found, checkFields: checkFields)
    }

    struct Iterator: AsyncIteratorProtocol {
        var source: RequestBody.AsyncIterator
        let parts: Parts
        let limit: Int
        let found: FoundParts
        let checkFields: @Sendable ([String: String]) throws -> Void
        var read = 0

        static let cutOff = "The upload was cut off before its end, so nothing was stored. Send it again."

        mutating func next() async throws -> ByteBuffer? {
            do {
                return try await nextChunk()
            } catch {
                throw found.refuse(error)
            }
        }

        mutating func nextChunk() async throws -> ByteBuffer? {
            while true {
                if let error = parts.error { throw error }
                if !parts.ready.isEmpty {
                    let chunk = parts.ready.removeFirst()
                    found.add(chunk.readableBytes)
                    return chunk
                }
                if parts.fileEnded {
                    found.finished()
                    return nil
                }
                let next: ByteBuffer?
                do {
                    next = try await source.next()
                } catch where CutOffBody.matches(error) {
                    throw UploadRefusal(status: .badRequest, message: Self.cutOff)
                }
                guard var chunk = next else {
                    throw UploadRefusal(status: .badRequest, message: parts.fileName == nil
                        ? "The upload held no file. Choose the export file and send the form again."
                        : Self.cutOff)
                }
                read += chunk.readableBytes
                guard read <= limit else {
                    throw UploadRefusal(status: .contentTooLarge,
                                        message: "The export is too large: this Vinylogue takes uploads of at most \(limit >> 20) MB.")
                }
                do {
                    try parts.parser.execute(chunk.readSlice(length: chunk.readableBytes)!)
                } catch {
                    throw UploadRefusal(status: .badRequest, message: "The upload is not a form Vinylogue can read, so nothing was stored. "
                        + "Send it again from the form on Settings.")
                }
                if parts.fileBegan, !parts.fieldsChecked {
                    parts.fieldsChecked = true
                    try checkFields(parts.fields)
                    found.began(file: parts.fileName ?? "export")
                }
            }
        }
    }

    /// The parser and what its callbacks have found; used by one iterator
    /// on one task at a time.
    final class Parts: @unchecked Sendable {
        let parser: MultipartParser
        var fields: [String: String] = [:]
        var fileName: String?
        var fileBegan = false
        var fieldsChecked = false
        var fileEnded = false
        var ready: [ByteBuffer] = []
        var error: UploadRefusal?
        private var name: String?
        private var isFile = false
        private var value = ByteBuffer()

        init(boundary: String) {
            parser = MultipartParser(boundary: boundary)
            parser.onHeader = { [unowned self] field, value in
                guard field.lowercased() == "content-disposition" else { return }
                name = Self.parameter("name", in: value)
                let file = Self.parameter("filename", in: value)
                isFile = file != nil && !fileBegan
                if isFile {
                    fileName = file.map(Self.baseName)
                    fileBegan = true
                }
            }
            parser.onBody = { [unowned self] chunk in
                if isFile {
                    ready.append(chunk)
                } else if fieldsChecked || value.readableBytes + chunk.readableBytes > 4096 {
                    // Fields come before the file, and are small.
                    if !fieldsChecked { error = UploadRefusal(status: .badRequest, message: "A field of the form is too long.") }
                } else {
                    value.writeImmutableBuffer(chunk)
                }
            }
            parser.onPartComplete = { [unowned self] in
                if isFile {
                    fileEnded = true
                    isFile = false
                } else if let name, !fieldsChecked {
                    fields[name] = value.readString(length: value.readableBytes) ?? ""
                }
                value.clear()
                name = nil
            }
        }

        /// A parameter's value from a Content-Disposition header
        /// (`form-data; name="file"; filename="a;b.csv"`), a token or a
        /// quoted string (RFC 7578, RFC 9110's quoted-string): inside
        /// quotes, `;` is part of the value and `\"` is a quote. A backslash
        /// before anything else is kept as it is, since browsers do not
        /// escape backslashes (and old ones sent whole Windows paths).
        static func parameter(_ key: String, in header: String) -> String? {
            var rest = header.drop { $0 != ";" }
            while rest.first == ";" {
                rest = rest.dropFirst()
                let name = rest.prefix { $0 != "=" && $0 != ";" }
                rest = rest.dropFirst(name.count)
                var value = ""
                if rest.first == "=" {
                    rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
                    if rest.first == "\"" {
                        rest = rest.dropFirst()
                        while let character = rest.first {
                            rest = rest.dropFirst()
                            if character == "\"" { break }
                            if character == "\\", let next = rest.first, next == "\"" || next == "\\" {
                                value.append(next)
                                rest = rest.dropFirst()
                            } else {
                                value.append(character)
                            }
                        }
                        rest = rest.drop { $0 != ";" }
                    } else {
                        let token = rest.prefix { $0 != ";" }
                        value = token.trimmingCharacters(in: .whitespaces)
                        rest = rest.dropFirst(token.count)
                    }
                }
                if name.trimmingCharacters(in: .whitespaces).lowercased() == key { return value }
            }
            return nil
        }

        /// The name a browser sent, without any directory (some send a
        /// whole path) and at most 200 characters.
        static func baseName(_ name: String) -> String {
            let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
            let trimmed = String(last.prefix(200))
            return trimmed.isEmpty ? "export" : trimmed
        }
    }
}
