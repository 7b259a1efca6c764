import Foundation
import ListenIngest
import Workers
import HTTPServing
import Hummingbird
import HummingbirdTesting
import Testing
import Web

/// A body that ends before its `Content-Length` (the client half-closes
/// its side of the connection) is a sentence about a cut-off form or
/// upload, with 400, never "Something went wrong" and a server error
/// (issue 38).
@Suite struct TruncatedBodyTests {
    static let boundary = ExportUploadTests.boundary

    @Test func aFormOrAnUploadCutOffBeforeItsLengthIsTold() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { _, client in
            let port = try #require(client.port)
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let upload = String(buffer: ExportUploadTests.body(token: session.token, fileName: "scrobbles.csv",
                                                                contents: Data(String(repeating: "Artist,Album,Track,01 Jan 2021 10:00\n", count: 40).utf8),
                                                                closed: false))
            let cases: [(path: String, type: String, sent: String, sentence: String)] = [
                ("/settings/import", "multipart/form-data; boundary=\(Self.boundary)", upload, "The upload was cut off"),
                ("/settings", "application/x-www-form-urlencoded", "csrf=\(session.token)&time_zone=Europe%2FBer", "The form was cut off"),
            ]
            for sent in cases {
                let socket = try RawSocket(port: port)
                defer { socket.close() }
                let head = "POST \(sent.path) HTTP/1.1\r\nHost: localhost\r\nCookie: \(session.cookie)\r\nContent-Type: \(sent.type)\r\n"
                    + "Content-Length: \(sent.sent.utf8.count + 5_000)\r\n\r\n"
                #expect(socket.send(head + sent.sent))
                socket.shutdownWrite()
                let answer = await socket.receive(until: "</html>")
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(sent.path): \(answer.prefix(300))")
                #expect(answer.contains(sent.sentence) && answer.contains("again"), "\(sent.path): \(answer)")
                #expect(!answer.contains("server’s log") && !answer.contains("server&#8217;s log"), "\(sent.path)")
            }
            let metrics = try await client.execute(uri: "/metrics", method: .get, headers: [:], body: nil)
            let failures = String(buffer: metrics.body).split(separator: "\n").filter {
                $0.hasPrefix("vinylogue_http_server_errors_total") && !$0.hasSuffix(" 0")
            }
            #expect(failures.isEmpty, "\(failures)")
        }
    }
}
