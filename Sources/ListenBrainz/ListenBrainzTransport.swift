import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import VinylogueCore

/// How `ListenBrainzClient` sends one request and reads its answer: over
/// HTTP to a ListenBrainz server (`live`), or to a stand-in in this process
/// (`inProcess`: the route tests' fake ListenBrainz, with no socket). The
/// client keeps everything else: the rate budget, retries and reading the
/// JSON.
public struct ListenBrainzTransport: Sendable {
    /// One request as the client makes it.
    public struct Request: Sendable {
        public enum Method: String, Sendable { case get = "GET", post = "POST" }
        public var url: String
        public var method: Method
        /// The user's token, sent as `Authorization: Token …`.
        public var token: String?
        /// A JSON body, for a `POST`.
        public var body: Data?
        public var userAgent: String
        /// The longest the whole exchange may take, answer included.
        public var timeout: Duration
        /// Answers larger than this are malformed.
        public var maxBytes: Int
    }

    /// An answer's head, read before its body: the status and the
    /// `X-RateLimit-*` values the client paces itself by.
    public struct Head: Sendable {
        public var status: Int
        /// `X-RateLimit-Remaining`.
        public var remaining: Int?
        /// `X-RateLimit-Reset-In`, in seconds.
        public var resetIn: Int?
        /// Reads the body, up to the request's `maxBytes`.
        public var body: @Sendable () async throws(ListenBrainzFailure) -> Data
    }

    /// A whole answer, as a stand-in in this process gives it.
    public struct Answer: Sendable {
        public var status: Int
        public var remaining: Int?
        public var resetIn: Int?
        public var body: Data

        public init(status: Int, remaining: Int? = nil, resetIn: Int? = nil, body: Data) {
            self.status = status
            self.remaining = remaining
            self.resetIn = resetIn
            self.body = body
        }
    }

    /// Sends `request` and returns the answer's head, whose `body` reads the rest.
    public let send: @Sendable (_ request: Request) async throws(ListenBrainzFailure) -> Head

    public init(send: @escaping @Sendable (_ request: Request) async throws(ListenBrainzFailure) -> Head) {
        self.send = send
    }

    /// Over `http` (shared with the rest of the process; not shut down here).
    public static func live(_ http: HTTPClient) -> ListenBrainzTransport {
        ListenBrainzTransport { request throws(ListenBrainzFailure) in
            var outgoing = HTTPClientRequest(url: request.url)
            outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
            outgoing.headers.add(name: "User-Agent", value: request.userAgent)
            outgoing.headers.add(name: "Accept", value: "application/json")
            if let token = request.token { outgoing.headers.add(name: "Authorization", value: "Token \(token)") }
            if let body = request.body {
                outgoing.headers.add(name: "Content-Type", value: "application/json")
                outgoing.body = .bytes(ByteBuffer(bytes: body))
            }
            let limit = request.maxBytes
            let response: HTTPClientResponse
            do {
                let timeout = request.timeout
                let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
                response = try await http.execute(outgoing, timeout: .nanoseconds(nanoseconds))
            } catch {
                throw failure(error, limit: limit)
            }
            return Head(status: Int(response.status.code),
                        remaining: response.headers.first(name: "X-RateLimit-Remaining").flatMap { Int($0) },
                        resetIn: response.headers.first(name: "X-RateLimit-Reset-In").flatMap { Int($0) }) { () throws(ListenBrainzFailure) in
                do {
                    let collected = try await response.body.collect(upTo: limit)
                    return Data(collected.readableBytesView)
                } catch {
                    throw failure(error, limit: limit)
                }
            }
        }
    }

    /// Requests answered by `answer` in this process, with no socket: a
    /// local stand-in for ListenBrainz. The limits are the live transport's:
    /// an answer over `maxBytes` is malformed, and one that takes longer
    /// than the timeout is a timeout (the answer is left to finish on its
    /// own, as a server carries on after a client hangs up).
    public static func inProcess(_ answer: @escaping @Sendable (_ request: Request) async -> Answer) -> ListenBrainzTransport {
        ListenBrainzTransport { request throws(ListenBrainzFailure) in
            let answering = Task { await answer(request) }
            guard let reply = await answering.value(within: request.timeout) else { throw .timeout }
            let limit = request.maxBytes
            return Head(status: reply.status, remaining: reply.remaining, resetIn: reply.resetIn) { () throws(ListenBrainzFailure) in
                guard reply.body.count <= limit else { throw tooLarge(limit) }
                return reply.body
            }
        }
    }

    /// An answer larger than the client accepts.
    static func tooLarge(_ limit: Int) -> ListenBrainzFailure {
        .malformedResponse(detail: "the response was larger than \(limit / 1024) KiB")
    }

    /// What an HTTP failure means for the client.
    static func failure(_ error: any Error, limit: Int) -> ListenBrainzFailure {
        switch error {
        case let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error):
            return .timeout
        case is NIOTooManyBytesError:
            return tooLarge(limit)
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return .transport(detail: "the connection was closed unexpectedly")
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return .transport(detail: "the connection was refused")
        default:
            // NIO's connection errors (refused, DNS) come wrapped; their
            // text names the host, so it is not repeated.
            return .transport(detail: String(reflecting: type(of: error)).contains("Connection") ? "no connection could be made" : "a network error")
        }
    }
}
