import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// How `SubsonicClient` sends a request: a form POSTed to one of the API's
/// own addresses, answered with a status and a body read up to a limit.
/// Live over an `HTTPClient` that follows no redirect; in-process for tests.
public struct SubsonicTransport: Sendable {
    public struct Answer: Sendable {
        public let status: Int
        public let body: Data

        public init(status: Int, body: Data) {
            self.status = status
            self.body = body
        }
    }

    let send: @Sendable (_ url: URL, _ form: String, _ server: String) async throws(MusicServerError) -> Answer

    public init(send: @escaping @Sendable (_ url: URL, _ form: String, _ server: String) async throws(MusicServerError) -> Answer) {
        self.send = send
    }

    /// The most an answer may hold (a search, an album's songs, a list of playlists).
    public static let maxBytes = 4 << 20

    /// An `HTTPClient` for music servers: no redirects followed, a short
    /// connect timeout, and each name of `pins` connected to its address
    /// rather than looked up. The caller shuts it down.
    public static func makeHTTPClient(resolving pins: [String: String] = [:]) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        // A name mapped to the address checked for it: connections go there
        // (TLS still names and verifies the name).
        configuration.dnsOverride = pins
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Over `http` (which must not follow redirects: `makeHTTPClient`).
    /// The whole answer, headers and body, must come within `timeout`: a
    /// server that sends its headers and then drips its body is cut off.
    public static func live(_ http: HTTPClient, timeout: Duration = .seconds(15)) -> SubsonicTransport {
        SubsonicTransport { url, form, server throws(MusicServerError) in
            let outcome = await Deadline.within(timeout, server: server) { await exchange(http, url: url, form: form, server: server, timeout: timeout) }
            return try outcome.get()
        }
    }

    private static func exchange(_ http: HTTPClient, url: URL, form: String, server: String, timeout: Duration) async -> Result<Answer, MusicServerError> {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Vinylogue")
        request.body = .bytes(ByteBuffer(string: form))
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000
                                                                             + timeout.components.attoseconds / 1_000_000_000))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return .failure(.timedOut(server))
        } catch {
            return .failure(Task.isCancelled ? .timedOut(server) : .unreachable(server))
        }
        if (300..<400).contains(Int(response.status.code)) { return .failure(.redirected(server)) }
        do {
            let body = try await response.body.collect(upTo: maxBytes)
            return .success(Answer(status: Int(response.status.code), body: Data(body.readableBytesView)))
        } catch is NIOTooManyBytesError {
            return .failure(.tooLarge(server))
        } catch {
            return .failure(Task.isCancelled ? .timedOut(server) : .unreachable(server))
        }
    }
}
