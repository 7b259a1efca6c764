import AsyncHTTPClient
import Foundation
import NIOCore
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

/// Performs one HTTP GET. The live value uses AsyncHTTPClient; tests may
/// substitute their own, though the project's tests prefer a real local server.
public struct LastFMTransport: Sendable {
    public let get: @Sendable (_ url: String, _ timeout: Duration, _ maxBytes: Int) async throws(SourceError) -> HTTPReply

    public init(get: @escaping @Sendable (_ url: String, _ timeout: Duration, _ maxBytes: Int) async throws(SourceError) -> HTTPReply) {
        self.get = get
    }

    /// GETs over `client`, mapping AsyncHTTPClient's errors to `SourceError`.
    public static func live(_ client: HTTPClient, userAgent: String = "Vinylogue/1.0") -> LastFMTransport {
        LastFMTransport { url, timeout, maxBytes throws(SourceError) in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept", value: "application/json")
            do {
                let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)))
                let body = try await response.body.collect(upTo: maxBytes)
                return HTTPReply(status: Int(response.status.code), body: Data(body.readableBytesView))
            } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
                throw .timeout
            } catch is NIOTooManyBytesError {
                throw .malformedResponse(detail: "the response was larger than \(maxBytes / 1024) KiB")
            } catch let error as HTTPClientError {
                throw .transport(detail: String(describing: error))
            } catch {
                throw .transport(detail: String(describing: error))
            }
        }
    }
}

