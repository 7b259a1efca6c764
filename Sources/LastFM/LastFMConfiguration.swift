import Foundation

/// How to reach Last.fm: key, address, and the client's manners.
public struct LastFMConfiguration: Sendable {
    /// The default API address.
    public static let defaultBaseURL = "https://ws.audioscrobbler.com/2.0/"

    /// The default address people approve a web application at.
    public static let defaultAuthURL = "https://www.last.fm/api/auth/"

    /// The API key; `nil` or empty means none is configured.
    public var apiKey: String?
    /// The key's shared secret (`LASTFM_API_SECRET`), which signs
    /// authenticated calls; with it, people can sign in with Last.fm.
    /// Never logged or shown.
    public var apiSecret: String?
    /// Where people are sent to let this application use their account
    /// (`LASTFM_AUTH_URL`; Last.fm's page by default).
    public var authURL: String = LastFMConfiguration.defaultAuthURL
    /// The API root, ending in `/`.
    public var baseURL: String
    /// At most this many requests reach Last.fm in any one-second window,
    /// shared by every caller of one client.
    public var requestsPerSecond: Int
    /// Attempts per request for temporary failures (8, 11, 16, 5xx, timeouts).
    public var maxAttempts: Int
    /// The first retry waits this long; each further retry waits twice as long.
    public var retryBaseDelay: Duration
    /// Time allowed for one HTTP exchange.
    public var timeout: Duration
    /// Responses larger than this are refused.
    public var maxResponseBytes: Int

    public init(apiKey: String?, baseURL: String = LastFMConfiguration.defaultBaseURL, requestsPerSecond: Int = 5,
                maxAttempts: Int = 3, retryBaseDelay: Duration = .milliseconds(500), timeout: Duration = .seconds(15),
                maxResponseBytes: Int = 8 << 20) {
        self.apiKey = apiKey.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.requestsPerSecond = max(1, requestsPerSecond)
        self.maxAttempts = max(1, maxAttempts)
        self.retryBaseDelay = retryBaseDelay
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// Whether people can sign in: both a key and its secret are configured.
    public var signsIn: Bool { apiKey != nil && apiSecret != nil }

    /// Reads `LASTFM_API_KEY`, `LASTFM_API_SECRET`, `LASTFM_API_URL`,
    /// `LASTFM_AUTH_URL` and `LASTFM_REQUESTS_PER_SECOND` from `environment`.
    public static func from(environment: [String: String]) -> LastFMConfiguration {
        var config = LastFMConfiguration(apiKey: environment["LASTFM_API_KEY"])
        config.apiSecret = environment["LASTFM_API_SECRET"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        if let url = environment["LASTFM_AUTH_URL"], !url.isEmpty { config.authURL = url }
        if let url = environment["LASTFM_API_URL"], !url.isEmpty {
            config.baseURL = url.hasSuffix("/") ? url : url + "/"
        }
        if let rate = environment["LASTFM_REQUESTS_PER_SECOND"].flatMap(Int.init), rate > 0 {
            config.requestsPerSecond = rate
        }
        return config
    }
}
