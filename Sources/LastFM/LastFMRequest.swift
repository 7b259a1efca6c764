import Crypto
import Foundation
import Synchronization
import VinylogueCore

/// One API call: method, parameters, what it is about (for error messages)
/// and how long a successful answer may be kept.
struct LastFMRequest: Sendable {
    enum Subject: Sendable {
        case user(Username)
        case album(artist: String, name: String)
        /// Completing a sign-in.
        case signIn
    }

    let method: String
    let parameters: [String: String]
    let subject: Subject
    let policy: CachePolicy
    /// Signed with the shared secret (`api_sig`), as authentication calls are.
    var signed = false

    /// Identifies the answer independently of the API key.
    var cacheKey: String {
        ([method] + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: "&")
    }

    /// The request's URL; `secret` signs it when the request is `signed`.
    func url(base: String, apiKey: String, secret: String? = nil) -> String {
        base + "?" + form(apiKey: apiKey, secret: secret)
    }

    /// Every parameter, URL-encoded (a query, or a POST's form body);
    /// `secret` signs it when the request is `signed`.
    func form(apiKey: String, secret: String? = nil) -> String {
        var all = parameters
        all["method"] = method
        all["api_key"] = apiKey
        if signed, let secret { all["api_sig"] = Self.signature(all, secret: secret) }
        all["format"] = "json"
        return all.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.encode($0.value))" }.joined(separator: "&")
    }

    /// Last.fm's `api_sig`: the MD5 (lowercase hex) of every parameter but
    /// `format` and `callback` as name then value, sorted by name, with no
    /// separators, followed by the shared secret, in UTF-8.
    public static func signature(_ parameters: [String: String], secret: String) -> String {
        let text = parameters.filter { $0.key != "format" && $0.key != "callback" }
            .sorted { $0.key < $1.key }.map { $0.key + $0.value }.joined() + secret
        return Insecure.MD5.hash(data: Data(text.utf8)).lowercaseHex
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }

    /// Last.fm's own wording, shortened to fit inside our sentence: its
    /// messages often run "Service Offline - This service is temporarily
    /// offline. Try again later", and the next step is ours to give.
    static func reason(_ message: String) -> String? {
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if let dash = text.range(of: " - ") { text = String(text[..<dash.lowerBound]) }
        if let stop = text.range(of: ". ") { text = String(text[..<stop.lowerBound]) }
        text = text.trimmingCharacters(in: CharacterSet(charactersIn: ". ").union(.whitespacesAndNewlines))
        // "Error 13" says nothing the code does not.
        guard !text.isEmpty, text.range(of: #"^[Ee]rror \d+$"#, options: .regularExpression) == nil else { return nil }
        return text.count > 120 ? String(text.prefix(119)) + "…" : text
    }

    /// The `SourceError` for a Last.fm error code.
    func error(code: Int, message: String) -> SourceError {
        switch code {
        case 6:
            switch subject {
            case .user(let user): .unknownUser(user)
            case .album(let artist, let name): .notFound(what: "The album “\(name)” by \(artist)")
            case .signIn: .notFound(what: "The Last.fm account")
            }
        case 17:
            if case .user(let user) = subject { .privateProfile(user: user.value) } else { .privateProfile(user: "This user") }
        case 10, 26: .invalidAPIKey(code: code)
        case 29: .rateLimited
        case 8, 11, 16:
            .temporarilyUnavailable(detail: Self.reason(message).map { "error \(code), “\($0)”" } ?? "error \(code)")
        default: .api(code: code, message: Self.reason(message) ?? "")
        }
    }
}

/// How long a successful answer may be served from the cache.
public enum CachePolicy: Sendable, Equatable {
    case never
    case forever
    case hours(Int)
    case days(Int)
    /// Until the next Last.fm week has closed.
    case untilNextWeekCloses

    /// The instant the answer expires; `.distantFuture` for `forever`, `nil`
    /// when it must not be stored.
    public func expiry(after now: Date) -> Date? {
        switch self {
        case .never: nil
        case .forever: .distantFuture
        case .hours(let h): now.addingTimeInterval(TimeInterval(h) * 3600)
        case .days(let d): now.addingTimeInterval(TimeInterval(d) * 86400)
        case .untilNextWeekCloses:
            LastFMWeekCalendar.week(containing: Int64(now.timeIntervalSince1970)).toDate
        }
    }
}

/// A stored successful response body.
public struct CachedResponse: Sendable {
    public let body: Data
    public let expires: Date
    public init(body: Data, expires: Date) {
        self.body = body
        self.expires = expires
    }
    public func isFresh(at now: Date) -> Bool { now < expires }
}

/// Keeps successful Last.fm response bodies. Error responses never reach it.
public protocol LastFMResponseCache: Sendable {
    func lookup(_ key: String) async -> CachedResponse?
    func store(_ body: Data, for key: String, expires: Date) async
    /// Runs `work` (which checks this cache, then fetches and stores) as
    /// the only such work for `key` among every process sharing the cache:
    /// others wait for it to end and then find its answer stored. A cache
    /// only this process uses just runs `work` (the client already joins
    /// identical requests within a process).
    func exclusively<T: Sendable>(_ key: String, _ work: @Sendable () async throws -> T) async throws -> T
}

extension LastFMResponseCache {
    public func exclusively<T: Sendable>(_ key: String, _ work: @Sendable () async throws -> T) async throws -> T {
        try await work()
    }
}

/// Decides when a request may leave for Last.fm: at most a configured number
/// reach it in any window, counted from each request's start until a window
/// after its answer arrived. `RateLimit` keeps to that within one process;
/// a shared implementation (`PostgresRequestPermits`) keeps a whole fleet
/// sharing one API key to it.
public protocol LastFMRequestPermits: Sendable {
    /// Waits for a permit and returns it; throws only if the wait cannot
    /// go on (the task is cancelled, the shared store is unreachable).
    func acquire() async throws -> Int
    /// Takes a permit at once when more than `spare` are free, without
    /// waiting; else nil, with how long until one may be free.
    func acquireIfFree(leaving spare: Int) async throws -> (permit: Int?, retryAfter: Duration)
    /// Gives `permit` back, a window after now.
    func release(_ permit: Int) async
}

/// Collects the failures that were papered over with stale cached answers
/// while building one page, so the page can say so.
public final class StaleResponses: Sendable {
    @TaskLocal public static var current: StaleResponses?

    private let errors = Mutex<[SourceError]>([])

    public init() {}

    func record(_ error: SourceError) {
        errors.withLock { $0.append(error) }
    }

    /// The failures recorded so far; empty when everything was fresh.
    public var failures: [SourceError] { errors.withLock { $0 } }
}

/// How long the person behind the current task is prepared to wait for
/// Last.fm: a web page sets one for its whole request, so however many calls
/// it makes, it answers in time.
///
/// When it passes, a call answers from its saved copy (recorded in
/// `StaleResponses`) or fails with `SourceError.stillWaiting`; the request
/// to Last.fm carries on regardless and stores its answer for the next
/// visit. Without one (the command line, sync), calls wait for Last.fm and
/// its retries.
public struct AnswerDeadline: Sendable {
    @TaskLocal public static var current: AnswerDeadline?

    let instant: ContinuousClock.Instant

    /// A deadline `patience` from now.
    public init(after patience: Duration) {
        instant = .now + patience
    }

    /// What is left of the patience; zero once it has passed.
    var remaining: Duration { max(.zero, instant - .now) }
}
