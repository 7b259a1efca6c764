import Foundation
import ListenBrainzTestServer
import VinylogueCore

// A local ListenBrainz-compatible server for tests and offline demos:
//   fake-listenbrainz [--port 8766] [--host 127.0.0.1] [--now UNIX-SECONDS] [--token TOKEN:USER]
// Prints the API root once listening. The token `test-token` belongs to `rob`.

var port = 8766
var host = "127.0.0.1"
var clock = WallClock.system
var tokens = ["test-token": "rob"]
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--port": port = args.popFirst().flatMap(Int.init) ?? port
    case "--host": host = args.popFirst() ?? host
    // A stopped clock bounds the generated histories (for process-level tests).
    case "--now": clock = args.popFirst().flatMap(Double.init).map { .fixed(Date(timeIntervalSince1970: $0)) } ?? clock
    case "--token":
        let parts = (args.popFirst() ?? "").split(separator: ":", maxSplits: 1)
        if parts.count == 2 { tokens[String(parts[0])] = String(parts[1]) }
    default:
        FileHandle.standardError.write(Data("usage: fake-listenbrainz [--port N] [--host ADDR] [--now UNIX-SECONDS] [--token TOKEN:USER]\n".utf8))
        exit(1)
    }
}

let fake = FakeListenBrainz(clock: clock, tokens: tokens)
try await FakeListenBrainzServer.run(fake, host: host, port: port) { url in
    FileHandle.standardOutput.write(Data("fake ListenBrainz listening at \(url) (token: test-token for rob)\n".utf8))
}
