import Foundation
import LastFMTestServer
import VinylogueCore

// A local Last.fm-compatible server for demos and browser tests:
//   fake-lastfm [--port 8765] [--host 127.0.0.1]
// Prints the API base URL once listening. The accepted API key is "test-key".

var port = 8765
var host = "127.0.0.1"
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--port": port = args.popFirst().flatMap(Int.init) ?? port
    case "--host": host = args.popFirst() ?? host
    default:
        FileHandle.standardError.write(Data("usage: fake-lastfm [--port N] [--host ADDR]\n".utf8))
        exit(1)
    }
}

let fake = try FakeLastFM(clock: .system)
try await FakeLastFMServer.run(fake, host: host, port: port) { url in
    print("fake Last.fm listening at \(url) (API key: test-key)")
    fflush(nil)  // all streams; naming `stdout` is an error under Swift 6 concurrency checking
}
