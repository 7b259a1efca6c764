/// How the ListenBrainz client reaches ListenBrainz and how patient it is.
/// Built by the composition root from `LISTENBRAINZ_API_URL`.
public struct ListenBrainzConfiguration: Sendable, Hashable {
    /// ListenBrainz's own API root.
    public static let defaultAPIRoot = "https://api.listenbrainz.org"

    /// The API root, without `/1/` (any ListenBrainz-compatible server;
    /// tests point it at `fake-listenbrainz`). A trailing `/` or `/1` is
    /// tolerated.
    public var apiRoot: String
    /// The longest one request may take, answer included.
    public var timeout: Duration
    /// Answers larger than this are refused as malformed (1,000 listens
    /// are about 0.5 MB).
    public var maxResponseBytes: Int
    /// Tries per read (`listens`, `validate`), the first included. A
    /// submission is tried once: the forwarding outbox decides when to try
    /// again.
    public var attempts: Int
    /// The wait before the second try; doubled for each try after it.
    public var backoff: Duration
    /// The longest wait the client accepts from `X-RateLimit-Reset-In`
    /// before a try (a longer one is cut to this).
    public var longestWait: Duration
    public var userAgent: String

    public init(apiRoot: String = ListenBrainzConfiguration.defaultAPIRoot, timeout: Duration = .seconds(10),
                maxResponseBytes: Int = 8 << 20, attempts: Int = 4, backoff: Duration = .milliseconds(500),
                longestWait: Duration = .seconds(60), userAgent: String = "Vinylogue/1.0") {
        var root = apiRoot
        while root.hasSuffix("/") { root.removeLast() }
        if root.hasSuffix("/1") { root.removeLast(2) }
        self.apiRoot = root
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.longestWait = longestWait
        self.userAgent = userAgent
    }
}

/// The client's sense of time for waiting: a monotonic "now" and a sleep.
/// The live value is `ContinuousClock`; tests pass one that records the
/// waits asked for and returns at once.
public struct ListenBrainzPacing: Sendable {
    public let now: @Sendable () -> ContinuousClock.Instant
    public let sleep: @Sendable (Duration) async throws -> Void

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The machine's monotonic clock and `Task.sleep`.
    public static var continuous: ListenBrainzPacing {
        ListenBrainzPacing(now: { ContinuousClock.now }, sleep: { try await Task.sleep(for: $0) })
    }
}
