import Foundation
import Synchronization

/// How the web app is served.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Serve the built-in demo (`demo` and four generated friends,
    /// `DemoHousehold`), and list its people when nobody else is listed.
    public var demo: Bool
    /// Largest request body accepted, in bytes (forms are small).
    public var maxBodyBytes: Int
    /// Largest export uploaded on Settings, in bytes (`VINYLOGUE_MAX_UPLOAD_MB`,
    /// 512 MB by default); a larger body is refused from its head.
    public var maxUploadBytes: Int = 512 << 20
    /// How long a connection may go without delivering a complete request
    /// head (or a piece of body) before it is closed: when it is new, between
    /// keep-alive requests, or while a request trickles in. Partial bytes do
    /// not reset the clock, so a client sending a request line a byte at a
    /// time (slowloris) is closed after this long too. A request the server
    /// is still answering is never cut off.
    public var idleTimeout: Duration
    /// The address people reach this server at (`VINYLOGUE_PUBLIC_URL`), for
    /// links that leave it: the Atom feed's. Nil means `http://host:port`.
    /// Never taken from a request's Host header, which anyone can set.
    public var publicURL: String?
    /// Requests each listen token or session key may make in 10 s on the
    /// listen APIs (`/1/`, `/2.0/`; `serve --listen-rate-limit`,
    /// `VINYLOGUE_LISTEN_RATE_LIMIT`); 0: no limit. See `ListenRateLimit`.
    public var listenRateLimit: Int = 1200
    /// Serve HTTPS with this certificate chain and key (PEM files;
    /// `serve --tls-certificate --tls-key`, `VINYLOGUE_TLS_CERTIFICATE`,
    /// `VINYLOGUE_TLS_KEY`); nil serves plain HTTP.
    public var tls: TLSFiles?
    /// One password for the whole site (`VINYLOGUE_SITE_PASSWORD`): every
    /// page asks for it (HTTP Basic, any user name), for a household that
    /// keeps its instance to itself. The listen APIs keep their own tokens,
    /// and `/healthz` and `/metrics` stay open. Nil: no password.
    public var sitePassword: String?

    /// Where a PEM certificate chain and its private key are.
    public struct TLSFiles: Sendable, Equatable {
        public var certificatePath: String
        public var keyPath: String

        public init(certificatePath: String, keyPath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }

    /// `publicURL` without a trailing slash, else `http://host:port`
    /// (`https://` when serving TLS) (with
    /// the configured port: see `PublicAddress` for the one bound).
    public var publicBase: String { publicBase(port: port) }

    package func publicBase(port: Int) -> String {
        if let publicURL, !publicURL.isEmpty { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        return "\(tls == nil ? "http" : "https")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Whether people reach the server over https (cookies get `Secure`).
    public var isPublicHTTPS: Bool { publicBase.lowercased().hasPrefix("https://") }

    public init(host: String = "127.0.0.1", port: Int = 8080, demo: Bool = false, maxBodyBytes: Int = 16 * 1024,
                idleTimeout: Duration = .seconds(10)) {
        self.host = host
        self.port = port
        self.demo = demo
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
    }
}

/// The address people reach a running server at, for links that leave a
/// page (the Atom feed's, Last.fm's sign-in callback): the configured public
/// URL, else `http://host:port` with the port actually bound, which is only
/// known once the server listens when port 0 was asked for.
package final class PublicAddress: Sendable {
    private let configuration: ServerConfiguration
    private let boundPort: Mutex<Int?> = Mutex(nil)

    package init(_ configuration: ServerConfiguration) { self.configuration = configuration }

    /// Called once the server listens.
    package func listening(on port: Int) { boundPort.withLock { $0 = port } }

    /// The base URL, without a trailing slash.
    package var base: String { configuration.publicBase(port: boundPort.withLock { $0 } ?? configuration.port) }
}
