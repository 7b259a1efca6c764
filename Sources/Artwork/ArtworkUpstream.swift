import AsyncHTTPClient
import Foundation
import VinylogueCore
import NIOCore

/// The gateway to wherever images come from: one GET returning status and
/// body. The live value uses AsyncHTTPClient; tests pass a closure.
public struct ArtworkUpstream: Sendable {
    /// GETs a URL built by `ArtworkAddress.upstreamURL`. Errors thrown are
    /// reported as `ArtworkError.unreachable` unless they already are an `ArtworkError`.
    public let fetch: @Sendable (_ url: String) async throws -> (status: Int, body: Data)

    public init(fetch: @escaping @Sendable (_ url: String) async throws -> (status: Int, body: Data)) {
        self.fetch = fetch
    }

    /// The largest image body accepted from upstream.
    public static let defaultMaxBytes = 5 * 1024 * 1024

    /// GETs over `client` with a whole-request `timeout` and a body cap.
    public static func live(_ client: HTTPClient, timeout: Duration = .seconds(10), maxBytes: Int = defaultMaxBytes, userAgent: String = "Vinylogue/1.0") -> ArtworkUpstream {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return ArtworkUpstream { url in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept", value: "image/*")
            do {
                let response = try await client.execute(request, timeout: .nanoseconds(nanoseconds))
                let body = try await response.body.collect(upTo: maxBytes)
                return (Int(response.status.code), Data(body.readableBytesView))
            } catch is NIOTooManyBytesError {
                throw ArtworkError.tooLarge
            }
        }
    }
}
