import Foundation
import LastFMTestServer
import VinylogueCore

// A local Last.fm-compatible server for demos and browser tests:
//   fake-lastfm [--port 8765] [--host 127.0.0.1] [--now UNIX-SECONDS] [--starting-at UNIX-SECONDS] [--user NAME=SEED@START ...]
// Prints the API base URL once listening. The accepted API key is "test-key".

var port = 8765
var host = "127.0.0.1"
var clock = WallClock.system
var generated: [(name: String, history: DemoHistory)] = []
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--port": port = args.popFirst().flatMap(Int.init) ?? port
    case "--host": host = args.popFirst() ?? host
    // A stopped clock bounds the generated histories (for process-level tests).
    case "--now": clock = args.popFirst().flatMap(Double.init).map { .fixed(Date(timeIntervalSince1970: $0)) } ?? clock
    // A clock put on a chosen day that runs on (the browser tests' dates).
    case "--starting-at": clock = args.popFirst().flatMap(WallClock.instant).map(WallClock.running(from:)) ?? clock
    // A generated user (besides rj and demo) whose history starts at START:
    // sign-ins and history copies of chosen sizes (process-level tests).
    case "--user":
        let spec = args.popFirst() ?? ""
        let parts = spec.split(separator: "=", maxSplits: 1)
        let rest = parts.count == 2 ? parts[1].split(separator: "@") : []
        guard rest.count == 2, let seed = UInt64(rest[0]), let start = Int64(rest[1]) else {
            FileHandle.standardError.write(Data("fake-lastfm: --user takes NAME=SEED@START (start in UNIX seconds), not \(spec)\n".utf8))
            exit(1)
        }
        generated.append((String(parts[0]), DemoHistory(seed: seed, start: start)))
    default:
        FileHandle.standardError.write(Data("usage: fake-lastfm [--port N] [--host ADDR] [--now UNIX-SECONDS] [--starting-at UNIX-SECONDS] [--user NAME=SEED@START ...]\n".utf8))
        exit(1)
    }
}

let fake = try FakeLastFM(clock: clock)
for (name, history) in generated { await fake.add(user: name, .generated(history)) }
try await FakeLastFMServer.run(fake, host: host, port: port) { url in
    FileHandle.standardOutput.write(Data("fake Last.fm listening at \(url) (API key: test-key)\n".utf8))
}
