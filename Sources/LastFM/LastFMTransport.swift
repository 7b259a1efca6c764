import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import VinylogueCore

/// What one HTTP GET returned.
public struct HTTPReply: Sendable {
    public let status: Int
    public let body: Data
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Performs one HTTP GET, or one POST of a form (the calls that change
/// something, such as `track.scrobble`). The live value uses
/// AsyncHTTPClient; `inProcess` hands the request to a function in this
/// process instead (the route tests' fake Last.fm, with no socket).
public struct LastFMTransport: Sendable {
    public typealias Exchange = @Sendable (_ url: String, _ form: String?, _ timeout: Duration, _ maxBytes: Int) async throws(SourceError) -> HTTPReply

    /// GET `url`, or POST `form` (URL-encoded) to it when there is one.
    public let exchange: Exchange

    public init(exchange: @escaping Exchange) {
        self.exchange = exchange
    }

    /// A GET of `url`.
    public func get(_ url: String, _ timeout: Duration, _ maxBytes: Int) async throws(SourceError) -> HTTPReply {
        try await exchange(url, nil, timeout, maxBytes)
    }

    /// An HTTP client configured for talking to Last.fm and its image hosts:
    /// a refused or failed connection fails the request at once (the client's
    /// own retries and backoff take it from there) instead of AsyncHTTPClient
    /// retrying the connection silently until the request's deadline, which
    /// made an unreachable Last.fm cost a full timeout per request.
    public static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Requests answered by `answer` in this process, with no socket: a
    /// local stand-in for Last.fm. The limits are the live transport's: an
    /// answer over `maxBytes` is malformed, and one that takes longer than
    /// the timeout is a timeout (the answer is left to finish on its own,
    /// as a server carries on after a client hangs up).
    public static func inProcess(_ answer: @escaping @Sendable (_ url: String, _ form: String?) async -> HTTPReply) -> LastFMTransport {
        LastFMTransport { url, form, timeout, maxBytes throws(SourceError) in
            let answering = Task { await answer(url, form) }
            guard let reply = await answering.value(within: timeout) else { throw .timeout }
            guard reply.body.count <= maxBytes else { throw tooLarge(maxBytes) }
            return reply
        }
    }

    /// GETs over `client`, mapping AsyncHTTPClient's errors to `SourceError`.
    public static func live(_ client: HTTPClient, userAgent: String = "Vinylogue/1.0") -> LastFMTransport {
        LastFMTransport { url, form, timeout, maxBytes throws(SourceError) in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept", value: "application/json")
            if let form {
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: form))
            }
            do {
                let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)))
                let body = try await response.body.collect(upTo: maxBytes)
                return HTTPReply(status: Int(response.status.code), body: Data(body.readableBytesView))
            } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
                throw .timeout
            } catch is NIOTooManyBytesError {
                throw tooLarge(maxBytes)
            } catch {
                throw .transport(detail: networkFailure(error))
            }
        }
    }

    /// An answer larger than the client accepts.
    static func tooLarge(_ maxBytes: Int) -> SourceError {
        .malformedResponse(detail: "the response was larger than \(maxBytes / 1024) KiB")
    }
}

/// A short phrase for a network failure, for the sentence a person reads
/// ("Could not reach Last.fm (the connection was refused)."). Decided by the
/// error's type and errno, never by its text (which names the host).
func networkFailure(_ error: any Error) -> String {
    switch error {
    case let io as IOError:
        return networkFailure(errno: io.errnoCode)
    case let connection as NIOConnectionError:
        if let failure = connection.connectionErrors.first { return networkFailure(failure.error) }
        if connection.dnsAError != nil || connection.dnsAAAAError != nil { return "the host name could not be found" }
        return "no connection could be made"
    case is SocketAddressError:
        return "the host name could not be found"
    case let http as HTTPClientError:
        if http == .remoteConnectionClosed { return "the connection was closed unexpectedly" }
        if [HTTPClientError.invalidURL, .emptyHost, .emptyScheme].contains(http) { return "the address is not a valid http(s) URL" }
        if String(describing: http).hasPrefix("HTTPClientError.unsupportedScheme") { return "the address is not a valid http(s) URL" }
        return "a network error"
    default:
        let type = String(reflecting: Swift.type(of: error))
        if type.contains("SSL") || type.contains("TLS") { return "a secure connection could not be set up" }
        return "a network error"
    }
}

private func networkFailure(errno code: CInt) -> String {
    switch code {
    case ECONNREFUSED: "the connection was refused"
    case ECONNRESET, EPIPE, ECONNABORTED: "the connection was closed unexpectedly"
    case ENETUNREACH, EHOSTUNREACH: "the network is unreachable"
    case ETIMEDOUT: "the connection timed out"
    default: "a network error (\(String(cString: strerror(code))))"
    }
}
