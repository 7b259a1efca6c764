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
    public static let timeout: TimeAmount = .seconds(15)

    /// An `HTTPClient` for music servers: no redirects followed, a short
    /// connect timeout. The caller shuts it down.
    public static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Over `http` (which must not follow redirects: `makeHTTPClient`).
    public static func live(_ http: HTTPClient) -> SubsonicTransport {
        SubsonicTransport { url, form, server throws(MusicServerError) in
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "Vinylogue")
            request.body = .bytes(ByteBuffer(string: form))
            let response: HTTPClientResponse
            do {
                response = try await http.execute(request, timeout: timeout)
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
                throw .timedOut(server)
            } catch {
                throw .unreachable(server)
            }
            if (300..<400).contains(Int(response.status.code)) { throw .redirected(server) }
            do {
                let body = try await response.body.collect(upTo: maxBytes)
                return Answer(status: Int(response.status.code), body: Data(body.readableBytesView))
            } catch let error as NIOTooManyBytesError {
                _ = error
                throw .tooLarge(server)
            } catch {
                throw .unreachable(server)
            }
        }
    }
}
