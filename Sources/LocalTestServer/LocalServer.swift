import Hummingbird
import Logging
import NIOCore

/// What the local stand-ins for outside services (`fake-lastfm`,
/// `fake-listenbrainz`) share: serving a router on a local port, quietly,
/// and telling the caller the address once it listens.
public enum LocalServer {
    /// Serves `router` on `host`:`port` until cancelled. `port` 0 picks a
    /// free port; `onRunning` receives the port it listens on.
    public static func run(_ router: Router<BasicRequestContext>, name: String, host: String, port: Int,
                           onRunning: @escaping @Sendable (Int) async -> Void) async throws {
        var logger = Logger(label: name)
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: name),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
        try await app.run()
    }

    /// Runs `serve` (a `run` that reports its address) for the duration of
    /// `body`, which gets that address; the server stops when `body` returns.
    public static func withRunning<T: Sendable>(_ serve: @escaping @Sendable (_ onRunning: @escaping @Sendable (String) async -> Void) async throws -> Void,
                                                _ body: @Sendable (String) async throws -> T) async throws -> T {
        let (addresses, continuation) = AsyncStream.makeStream(of: String.self)
        let server = Task { try await serve { address in continuation.yield(address) } }
        defer { server.cancel() }
        var iterator = addresses.makeAsyncIterator()
        guard let address = await iterator.next() else { throw CancellationError() }
        return try await body(address)
    }
}
