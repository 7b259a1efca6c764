import Foundation
import LastFMTestServer
import VinylogueCore

// A local Last.fm-compatible server for demos and browser tests:
//   fake-lastfm [--port 8765] [--host 127.0.0.1] [--now UNIX-SECONDS] [--starting-at UNIX-SECONDS]
// Prints the API base URL once listening. The accepted API key is "test-key".

var port = 8765
var host = "127.0.0.1"
var clock = WallClock.system
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--port": port = args.popFirst().flatMap(Int.init) ?? port
    case "--host": host = args.popFirst() ?? host
    // A stopped clock bounds the generated histories (for process-level tests).
    case "--now": clock = args.popFirst().flatMap(Double.init).map { .fixed(Date(timeIntervalSince1970: $0)) } ?? clock
    // A clock put on a chosen day that runs on (the browser tests' dates).
    case "--starting-at": clock = args.popFirst().flatMap(WallClock.instant).map(WallClock.running(from:)) ?? clock
    default:
        FileHandle.standardError.write(Data("usage: fake-lastfm [--port N] [--host ADDR] [--now UNIX-SECONDS] [--starting-at UNIX-SECONDS]\n".utf8))
        exit(1)
    }
}

let fake = try FakeLastFM(clock: clock)
try await FakeLastFMServer.run(fake, host: host, port: port) { url in
    FileHandle.standardOutput.write(Data("fake Last.fm listening at \(url) (API key: test-key)\n".utf8))
}
