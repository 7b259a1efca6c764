// The ceiling a warm page is measured against (`scripts/bench-web`):
// Hummingbird's own hello-world, answering GET / with a body of the size
// given, and nothing else. Usage: web-ceiling PORT BYTES
import Foundation
import Hummingbird

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]), let bytes = Int(arguments[2]), bytes >= 0 else {
    print("usage: web-ceiling PORT BYTES")
    exit(2)
}
let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: bytes)
let router = Router()
router.get("/") { _, _ in
    Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"], body: .init(byteBuffer: body))
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "ceiling"))
try await app.runService()
