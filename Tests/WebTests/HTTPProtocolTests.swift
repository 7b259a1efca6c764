import Foundation
import Workers
import Hummingbird
import HummingbirdTesting
import Testing
@testable import HTTPServing
@testable import ListenIngest
@testable import Web
#if canImport(Glibc)
import Glibc
#endif

@Suite struct MethodNotAllowedTests {
    @Test func aKnownAddressWithTheWrongMethodIs405WithAllow() async throws {
        try await Harness.run(demo: true) { _, client in
            for (method, uri) in [(HTTPRequest.Method.delete, "/healthz"), (.post, "/u/demo"), (.put, "/static/vinylogue.css"),
                                  (.delete, "/u/demo/week/2020-07-08"), (.patch, "/u/demo/feed.atom")] {
                let response = try await client.execute(uri: uri, method: method, headers: [.accept: "text/html"], body: nil)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == "GET, HEAD", "\(method) \(uri)")
                let page = String(buffer: response.body)
                #expect(page.contains("This address answers GET and HEAD requests, not \(method.rawValue)."), "\(method) \(uri)")
                #expect(page.contains("<html"), "\(method) \(uri): the site's error page")
            }
        }
    }

    @Test func aFormAddressListsPostAndAGetOnlyApiAnswersJSON() async throws {
        try await Harness.run { _, client in
            let settings = try await client.execute(uri: "/settings", method: .delete, headers: [:], body: nil)
            #expect(settings.status == .methodNotAllowed)
            #expect(settings.headers[.allow] == "GET, HEAD, POST")
            let users = try await client.execute(uri: "/users", method: .get, headers: [:], body: nil)
            #expect(users.status == .methodNotAllowed)
            #expect(users.headers[.allow] == "POST")
            let api = try await client.execute(uri: "/api/users", method: .post, headers: [:], body: nil)
            #expect(api.status == .methodNotAllowed)
            #expect(api.headers[.allow] == "GET, HEAD")
            #expect(String(buffer: api.body).contains(#""error""#))
        }
    }

    @Test func unknownAddressesAndMissingFilesStay404() async throws {
        try await Harness.run { _, client in
            for (method, uri) in [(HTTPRequest.Method.delete, "/nowhere"), (.get, "/nowhere"), (.put, "/static/a/b"),
                                  (.get, "/static/missing.css")] {
                let response = try await client.execute(uri: uri, method: method, headers: [:], body: nil)
                #expect(response.status == .notFound, "\(method) \(uri)")
                #expect(response.headers[.allow] == nil, "\(method) \(uri)")
            }
        }
    }
}

@Suite struct ConnectionTimeoutTests {
    static let timeout = Duration.milliseconds(300)

    @Test func aHalfSentRequestLineIsClosedAfterTheTimeout() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: Self.timeout), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            let start = ContinuousClock.now
            socket.send("GET / HTTP/1.1\r\n")
            #expect(await socket.receiveUntilClosed() == .closed)
            #expect(ContinuousClock.now - start >= .milliseconds(250), "closed by the timer, not at once")
        }
    }

    @Test func aSilentConnectionIsClosed() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: Self.timeout), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            #expect(await socket.receiveUntilClosed() == .closed)
        }
    }

    /// Bytes that never complete a head do not keep a connection open.
    @Test func aRequestHeadSentAByteAtATimeIsClosed() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: Self.timeout), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            let slowHead = "GET / HTTP/1.1\r\n" + String(repeating: "X-Slow: 1\r\n", count: 20)
            var sentEverything = true
            for byte in slowHead {
                guard socket.send(String(byte)) else { sentEverything = false; break }
                try await Task.sleep(for: .milliseconds(50))  // pacing, far under the timeout
            }
            // 286 bytes at 50 ms each take over 14 s; the server gives up
            // after 300 ms, long before.
            #expect(!sentEverything)
        }
    }

    @Test func keepAliveRequestsStillWork() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(2)), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            for _ in 0..<3 {
                #expect(socket.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                let answer = await socket.receive(until: #""status":"ok"}"#)
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            }
            // Idle after its last answer, the connection is closed too.
            #expect(await socket.receiveUntilClosed() == .closed)
        }
    }
}

/// A body announced over its address's limit is refused from the request's
/// head, and `Expect: 100-continue` is answered (issue 27: a player saying
/// 999,999,999 bytes got no answer until the idle timeout, and curl's
/// 20 MB upload was read whole before its 413).
@Suite struct EarlyBodyLimitTests {
    static func head(_ path: String, length: Int, expectContinue: Bool = false, type: String = "application/json") -> String {
        "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(type)\r\nContent-Length: \(length)\r\n"
            + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n"
    }

    @Test func anOverLongBodyIsRefusedFromItsHeadOnEveryLimitedAddress() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { _, client in
            let port = try #require(client.port)
            let cases: [(String, Int, String)] = [
                ("/1/submit-listens", 999_999_999, "larger than 10240000 bytes; send at most 1000 listens at a time"),
                ("/1/submit-listens", 10_240_001, "larger than 10240000 bytes"),
                ("/2.0/", 999_999_999, #"<error code="6">Invalid parameters: The request is larger than 1048576 bytes"#),
                ("/2.0/?format=json", 2_000_000, #""error":6"#),
                ("/settings", 1_000_000, "The form was too large"),
                // Spelt as the router reads them too: each keeps its own limit.
                ("/1//submit-listens/", 10_240_001, "send at most 1000 listens at a time"),
                ("//2.0//", 2_000_000, #"<error code="6">"#),
            ]
            for (path, length, sentence) in cases {
                // Only the head is sent: the answer must not wait for a body.
                let socket = try RawSocket(port: port)
                defer { socket.close() }
                #expect(socket.send(Self.head(path, length: length)))
                let answer = await socket.receive(until: sentence)
                #expect(answer.hasPrefix("HTTP/1.1 413"), "\(path): \(answer)")
                #expect(answer.contains(sentence), "\(path): \(answer)")
                #expect(answer.lowercased().contains("connection: close"), "\(path): \(answer)")
                #expect(await socket.receiveUntilClosed() == .closed, "\(path)")
            }
        }
    }

    @Test func aClientThatExpectsContinueIsToldToSendOrRefusedBeforeSending() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { _, client in
            let port = try #require(client.port)
            // Too large: 413 at once, never 100.
            let large = try RawSocket(port: port)
            defer { large.close() }
            #expect(large.send(Self.head("/1/submit-listens", length: 20_000_000, expectContinue: true)))
            let refused = await large.receive(until: "send at most 1000 listens")
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused)")
            #expect(!refused.contains("100 Continue"))

            // Within the limit: 100 Continue before any body, then the route's answer.
            let body = #"{"listen_type":"single","payload":[]}"#
            let small = try RawSocket(port: port)
            defer { small.close() }
            #expect(small.send(Self.head("/1/submit-listens", length: body.utf8.count, expectContinue: true)))
            var received = await small.receive(until: "\r\n\r\n")
            #expect(received.hasPrefix("HTTP/1.1 100 Continue"), "\(received)")
            #expect(small.send(body))
            // No token: the route answers without needing the body, so its
            // answer may come in the same read as the 100 (it did once, on a
            // loaded machine, and the test waited for more that never came).
            if !received.contains("}") { received += await small.receive(until: "}") }
            let answer = received.range(of: "\r\n\r\n").map { String(received[$0.upperBound...]) } ?? ""
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(received)")
        }
    }

    /// A body within its route's limit but over a form's reaches the route
    /// however the path is spelt (a trailing `/` used to get the forms' 16 KiB).
    @Test func routeLimitsFollowTheRoutersReadingOfThePath() throws {
        let limits = BodyLimits.web(forms: 16_384, uploads: 512 << 20)
        for path in ["/1/submit-listens", "/1/submit-listens/", "//1/submit-listens", "/1//submit-listens?x=1"] {
            var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: path)
            request.headerFields[.contentLength] = "30000"
            #expect(try #require(limits.limit(for: request)).bytes == 10_240_000, "\(path)")
        }
        for path in ["/2.0", "/2.0/", "//2.0//?format=json"] {
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: path)
            #expect(try #require(limits.limit(for: request)).bytes == 1 << 20, "\(path)")
        }
        #expect(try #require(limits.limit(for: HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/settings/"))).bytes == 16_384)
        // Audioscrobbler 1.2 takes what /2.0/ takes, not a form's 16 KiB.
        for path in ["/audioscrobbler/submit", "/audioscrobbler//submit/", "/audioscrobbler/nowplaying"] {
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: path)
            #expect(try #require(limits.limit(for: request)).bytes == 1 << 20, "\(path)")
        }
        // An uploaded export may be as large as the upload limit, and no larger.
        let upload = try #require(limits.limit(for: HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/settings/import")))
        #expect(upload.bytes == 512 << 20 && upload.refusal.body.contains("at most 512 MB"))
    }

    /// A 2 GB upload is refused from its head, before a byte of it is read.
    @Test func aTwoGigabyteUploadIsRefusedBeforeItIsRead() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            #expect(socket.send(Self.head("/settings/import", length: 2 << 30)))
            let answer = await socket.receive(until: "at most 512 MB")
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        }
    }

    /// Pipelined behind a request still being answered, a refusal waits its
    /// turn (it used to be written first and close the connection, so the
    /// earlier request's answer never came).
    @Test func aPipelinedRefusalComesAfterTheAnswersAheadOfIt() async throws {
        try await Harness.run(server: ServerConfiguration(port: 0, idleTimeout: .seconds(10)), testing: .live) { _, client in
            let socket = try RawSocket(port: try #require(client.port))
            defer { socket.close() }
            #expect(socket.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                                + Self.head("/1/submit-listens", length: 20_000_000)))
            let answers = await socket.receive(until: "send at most 1000 listens")
            let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["200", "200", "413"], "\(answers)")
        }
    }

    @Test func expectationsAreReadWhereverTheyAreListed() {
        #expect(EarlyBodyLimit.asksToContinue("100-continue"))
        #expect(EarlyBodyLimit.asksToContinue("100-Continue, foo"))
        #expect(EarlyBodyLimit.asksToContinue("100-continue, 100-continue"))
        #expect(!EarlyBodyLimit.asksToContinue("foo"))
    }

    @Test func contentLengthsThatOverflowAreTooLarge() {
        #expect(EarlyBodyLimit.exceeds("99999999999999999999999999", 10))
        #expect(EarlyBodyLimit.exceeds(" 11 ", 10))
        #expect(!EarlyBodyLimit.exceeds("10", 10))
        #expect(!EarlyBodyLimit.exceeds("-5", 10))
    }
}

/// A bare TCP client for what an HTTP client would never do. Its reads block,
/// so they run on a Dispatch thread, never on Swift's cooperative pool; each
/// read gives up after 10 s, which only guards a failing test.
final class RawSocket: Sendable {
    enum Ending: Equatable { case closed, stillOpen }

    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var guardTime = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &guardTime, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(descriptor); throw POSIXError(.ECONNREFUSED) }
    }

    /// Sends `text`; false once the server has closed the connection.
    @discardableResult func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// One read: bytes, or empty at end of stream, or `nil` when the guard ran out.
    private func read() async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0 {
                    // ECONNRESET is the server closing too.
                    continuation.resume(returning: errno == ECONNRESET ? [] : nil)
                } else {
                    continuation.resume(returning: Array(buffer.prefix(count)))
                }
            }
        }
    }

    /// Reads until the server closes the connection.
    func receiveUntilClosed() async -> Ending {
        while let bytes = await read() {
            if bytes.isEmpty { return .closed }
        }
        return .stillOpen
    }

    /// Reads until the text received contains `marker` (or the stream ends).
    func receive(until marker: String) async -> String {
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(marker), let bytes = await read(), !bytes.isEmpty {
            received += bytes
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Says no more will be sent (a half-close), keeping the connection
    /// open to read the answer.
    func shutdownWrite() { _ = shutdown(descriptor, Int32(SHUT_WR)) }

    func close() { Glibc.close(descriptor) }
}
