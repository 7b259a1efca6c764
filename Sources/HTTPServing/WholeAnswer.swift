import Foundation
import Hummingbird
import NIOCore

/// An answer made whole at once from its bytes, as the pages, the `/api/`
/// JSON and the listen APIs send it: its content type, `no-cache`, and on
/// a 200 a strong `ETag` made from the bytes, so a reload is a 304 and
/// every instance of a fleet tags the same bytes alike.
package enum WholeAnswer {
    package static let html = "text/html; charset=utf-8"
    package static let json = "application/json; charset=utf-8"

    package static func response(status: HTTPResponse.Status, body: ByteBuffer, contentType: String) -> Response {
        Response(status: status, headers: headers(contentType, etag: status == .ok ? etag(of: body) : nil), body: .init(byteBuffer: body))
    }

    /// JSON bytes as a whole answer.
    package static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        response(status: status, body: ByteBuffer(bytes: data), contentType: json)
    }

    package static func headers(_ contentType: String, etag: String?) -> HTTPFields {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-cache"]
        if let etag { headers[.eTag] = etag }
        return headers
    }

    /// A strong entity tag made from the bytes alone (64-bit FNV-1a).
    package static func etag(of body: ByteBuffer) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        body.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        return "\"v" + String(hash, radix: 16) + "\""
    }
}
