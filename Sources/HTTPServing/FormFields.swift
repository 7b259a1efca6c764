import Foundation
import Hummingbird
import NIOHTTP1

/// An `application/x-www-form-urlencoded` body, read with a size limit.
package struct FormFields: Sendable {
    package let values: [String: String]

    package subscript(_ name: String) -> String? { values[name] }

    package init(values: [String: String]) { self.values = values }

    /// Parses `a=1&b=x+y%21`.
    package init(encoded: String) {
        var values: [String: String] = [:]
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode: (Substring) -> String = {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            let key = decode(parts[0])
            if values[key] == nil { values[key] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        self.values = values
    }

    /// Reads the body of `request`; a body over `limit` bytes is refused with 413.
    package static func read(_ request: Request, limit: Int) async throws -> FormFields {
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return FormFields(encoded: String(buffer: buffer))
        } catch is NIOTooManyBytesError {
            throw HTTPError(.contentTooLarge, message: "The form was too large.")
        } catch where CutOffBody.matches(error) {
            throw HTTPError(.badRequest, message: "The form was cut off before its end, so nothing was saved. Go back and send it again.")
        }
    }
}

/// A request body that ended before the length its head announced: the
/// client closed its side of the connection early (a dropped connection, a
/// cancelled send). The HTTP decoder says so with its own error, which is
/// the visitor's to hear about as a form or upload to send again, not a
/// fault of this server.
package enum CutOffBody {
    package static func matches(_ error: any Error) -> Bool {
        (error as? HTTPParserError) == .invalidEOFState
    }
}

import NIOCore
