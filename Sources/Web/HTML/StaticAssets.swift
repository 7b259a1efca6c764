import Foundation
import Hummingbird

/// The stylesheets (the site's, the widget's) and the script, loaded once from the module's resources and
/// served with long cache lifetimes under a versioned URL. They are read
/// (blocking file reads) at start-up, on a thread of their own, when
/// `PageRenderer.bundled()` asks for `version`, never while a request waits.
enum StaticAssets {
    static let files: [String: (type: String, body: ByteBuffer)] = {
        var files: [String: (String, ByteBuffer)] = [:]
        for (name, type) in [("vinylogue.css", "text/css; charset=utf-8"), ("vinylogue.js", "text/javascript; charset=utf-8"),
                             ("widget.css", "text/css; charset=utf-8")] {
            if let url = Bundle.module.url(forResource: "Public/\(name)", withExtension: nil),
               let data = try? Data(contentsOf: url) {
                files[name] = (type, ByteBuffer(bytes: data))
            }
        }
        return files
    }()

    /// The OpenAPI 3.1 description of the JSON API, `/1/` and `/2.0/`
    /// (`Public/openapi.json`, written by hand), served at `/openapi.json`.
    static let apiDescription: ByteBuffer? = {
        guard let url = Bundle.module.url(forResource: "Public/openapi.json", withExtension: nil),
              let data = try? Data(contentsOf: url) else { return nil }
        return ByteBuffer(bytes: data)
    }()

    static func apiDescriptionResponse() -> Response {
        guard let body = apiDescription else { return Response(status: .notFound) }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"], body: .init(byteBuffer: body))
    }

    /// A short fingerprint of the assets' contents.
    static let version: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for name in files.keys.sorted() {
            for byte in files[name]!.body.readableBytesView {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return String(hash, radix: 16)
    }()

    static func response(_ name: String) -> Response {
        guard let file = files[name] else { return Response(status: .notFound) }
        return Response(status: .ok, headers: [.contentType: file.type, .cacheControl: "public, max-age=31536000, immutable"],
                        body: .init(byteBuffer: file.body))
    }
}
