import Foundation

/// How the web app is served.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Serve the built-in demo history for the user `demo`, and list it
    /// when nobody is listed yet.
    public var demo: Bool
    /// Largest request body accepted, in bytes (forms are small).
    public var maxBodyBytes: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, demo: Bool = false, maxBodyBytes: Int = 16 * 1024) {
        self.host = host
        self.port = port
        self.demo = demo
        self.maxBodyBytes = maxBodyBytes
    }
}
