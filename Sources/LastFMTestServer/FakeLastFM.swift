import Foundation
import LocalTestServer
import VinylogueCore

/// The state of a local Last.fm-compatible server: who exists, what it
/// answers, which faults to inject, and a log of what it was asked.
///
/// The user `ybsc` answers with the real captured responses in `Fixtures/`;
/// generated users answer from a `DemoHistory` with their own seed.
public actor FakeLastFM {
    /// A fault to inject into matching requests.
    public enum Fault: Sendable, Codable, Equatable {
        /// Last.fm's error body `{"error": code, "message": ...}` with this HTTP status.
        case apiError(code: Int, status: Int)
        /// A bare HTTP status with an HTML body, as a proxy in front of Last.fm sends.
        case httpStatus(Int)
        /// The real answer, after a delay.
        case delay(milliseconds: Int)
        /// The real answer, held back until `releaseHeld()`: a Last.fm as
        /// slow as a test needs, without a test waiting on a clock.
        case held
        /// The real answer cut off halfway.
        case truncated
        /// A body that is not JSON.
        case malformed
        /// Valid JSON of the wrong shape.
        case wrongShape
        /// A body of this many bytes.
        case oversized(bytes: Int)
    }

    /// When and how often a fault applies.
    public struct FaultRule: Sendable, Codable {
        public var fault: Fault
        /// Only this method (any when nil).
        public var method: String?
        /// Only this user, case-insensitive (any when nil).
        public var user: String?
        /// How many more requests it applies to (forever when nil).
        public var remaining: Int?
        /// Only requests with these parameter values, such as one chart
        /// week's `from` (any when nil).
        public var parameters: [String: String]?

        public init(_ fault: Fault, method: String? = nil, user: String? = nil, times: Int? = nil,
                    parameters: [String: String]? = nil) {
            self.fault = fault
            self.method = method
            self.user = user
            self.remaining = times
            self.parameters = parameters
        }
    }

    /// One request as the server saw it.
    public struct LoggedRequest: Sendable, Codable {
        public let method: String
        public let parameters: [String: String]
        /// Seconds since the server started, when the request arrived.
        public let received: Double
        /// Seconds since the server started, when the answer was sent.
        public var answered: Double?
    }

    /// A user the fake knows.
    public enum Account: Sendable {
        /// Answers from the captured fixtures.
        case fixtures
        /// Answers from a generated history.
        case generated(DemoHistory)
        /// Exists, but its listening data is private (error 17).
        case privateProfile
        /// The same album chart every week of `weeks` (for hostile names and
        /// other hand-made cases).
        case scripted(weeks: [ChartWeek], albums: [ChartEntry])
    }

    let fixtures: Fixtures
    let clock: WallClock
    private var accounts: [String: (name: String, account: Account)] = [:]
    /// Generated users whose history is made when first asked for (`rj`,
    /// `demo`): a history costs milliseconds to make, and most tests ask
    /// for neither.
    private var unmade: [String: (name: String, history: @Sendable () -> DemoHistory)] = [:]
    private var listeners: [String: (name: String, account: Account)] = [:]
    private let heldAnswers = HeldAnswers()
    private var rules: [FaultRule] = []
    private(set) var log: [LoggedRequest] = []
    /// Image files served, in order.
    var imageLog: [String] = []
    private let started = ContinuousClock.now
    /// The API key the fake accepts; any other gives error 10.
    public let apiKey: String
    /// The key's shared secret: `auth.getSession` must be signed with it.
    public let apiSecret: String
    /// Web-authentication tokens handed out, by token.
    var authTokens: [String: IssuedToken] = [:]
    /// Session keys given at sign-in, to the account name.
    var sessionKeys: [String: String] = [:]
    /// Every scrobble `track.scrobble` accepted, by account name, in the
    /// order they came, repeats included: what a test counts.
    var scrobblesReceived: [String: [Scrobble]] = [:]
    /// Tests waiting for an account to have received some scrobbles.
    var scrobbleWaiters: [(name: String, count: Int, waiter: CheckedContinuation<Void, Never>)] = []
    /// What `track.updateNowPlaying` said each account plays now, by account name.
    var nowPlayingReceived: [String: Scrobble] = [:]
    var nowPlayingWaiters: [(name: String, track: String, waiter: CheckedContinuation<Void, Never>)] = []

    /// A fake with `ybsc` (fixtures), `rj` and `demo` (generated), and
    /// `hidden` (private).
    public init(clock: WallClock, apiKey: String = "test-key", apiSecret: String = "test-secret") throws {
        self.fixtures = try Fixtures()
        self.clock = clock
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        accounts["ybsc"] = ("ybsc", .fixtures)
        unmade["rj"] = ("RJ", { DemoHistory(seed: 7, start: 1_136_073_600) })
        unmade["demo"] = ("demo", { DemoHistory() })
        accounts["hidden"] = ("hidden", .privateProfile)
    }

    /// Albums (lowercased "artist\u{1F}album") answered without a cover.
    private(set) var coverless: Set<String> = []

    /// Makes `album.getinfo` answer for this album with no image, as
    /// Last.fm does for albums nobody uploaded art for.
    public func removeCover(artist: String, album: String) {
        coverless.insert(artist.lowercased() + "\u{1F}" + album.lowercased())
    }

    public func add(user: String, _ account: Account) {
        accounts[user.lowercased()] = (user, account)
        unmade[user.lowercased()] = nil
    }

    /// Scrobbles submitted after the fact (Last.fm takes them up to two weeks
    /// late), by user key; a generated user's recent tracks include them.
    private(set) var lateScrobbles: [String: [Scrobble]] = [:]
    /// Generated users' recent tracks for one walk's bounds, newest first
    /// (the last few asked for).
    var recentListings: [String: [Scrobble]] = [:]

    /// Adds a scrobble to `user`'s history now, whatever its timestamp.
    public func scrobbleLate(_ scrobble: Scrobble, for user: String) {
        lateScrobbles[user.lowercased(), default: []].append(scrobble)
    }

    public func inject(_ rule: FaultRule) { rules.append(rule) }

    /// Lets every answer held by `Fault.held` go.
    public func releaseHeld() { heldAnswers.releaseAll() }

    /// Lets the answer held longest go.
    public func releaseFirstHeld() { heldAnswers.releaseFirst() }

    /// The most answers ever held back at once.
    public func mostHeldAtOnce() -> Int { heldAnswers.mostHeldAtOnce }

    /// Returns once `Fault.held` is holding back at least `count` answers.
    public func untilHolding(_ count: Int) async { await heldAnswers.untilHolding(count) }

    func hold() async { await heldAnswers.hold() }
    public func clearFaults() { rules.removeAll() }
    public func requests() -> [LoggedRequest] { log }
    public func imagesServed() -> [String] { imageLog }
    public func clearLog() { log.removeAll() }

    func knownNames() -> [String] { (accounts.values.map(\.name) + unmade.values.map(\.name)).sorted() }

    func account(_ name: String?) -> (name: String, account: Account)? {
        guard let name else { return nil }
        if let known = accounts[name.lowercased()] { return known }
        if let pending = unmade.removeValue(forKey: name.lowercased()) {
            let made = (pending.name, Account.generated(pending.history()))
            accounts[name.lowercased()] = made
            return made
        }
        return listener(name)
    }

    /// "listener1" … "listener1000000": generated listeners, each with a
    /// history of its own (seeded by its number, starting on one of 520
    /// weeks from 2006), for benchmarks over many users. Not listed as
    /// anyone's friends.
    func listener(_ name: String) -> (name: String, account: Account)? {
        let key = name.lowercased()
        if let made = listeners[key] { return made }
        guard key.hasPrefix("listener"), let n = Int(key.dropFirst("listener".count)), (1...1_000_000).contains(n),
              key == "listener\(n)" else { return nil }
        let made = (name, Account.generated(DemoHistory(seed: UInt64(n), start: 1_136_073_600 + Int64(n % 520) * 604_800)))
        listeners[key] = made
        return made
    }

    /// Records the request and returns the fault to apply, if any, with the
    /// request's index in the log.
    func begin(method: String, parameters: [String: String]) -> (Int, Fault?) {
        log.append(LoggedRequest(method: method, parameters: parameters, received: elapsed()))
        let user = parameters["user"] ?? parameters["username"]
        var fault: Fault?
        if let index = rules.firstIndex(where: { rule in
            (rule.method == nil || rule.method == method)
                && (rule.user == nil || rule.user?.lowercased() == user?.lowercased())
                && (rule.parameters ?? [:]).allSatisfy { parameters[$0.key] == $0.value }
                && (rule.remaining ?? 1) > 0
        }) {
            fault = rules[index].fault
            if let left = rules[index].remaining { rules[index].remaining = left - 1 }
        }
        return (log.count - 1, fault)
    }

    func end(_ index: Int) {
        if log.indices.contains(index) { log[index].answered = elapsed() }
    }

    private func elapsed() -> Double {
        let d = ContinuousClock.now - started
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// The captured responses, loaded from the module's resources.
struct Fixtures: Sendable {
    let userInfo: Data
    let friends: Data
    let chartList: Data
    let albumChart: Data
    let albumInfo: Data
    /// The week of the captured album chart.
    static let albumChartWeek = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)

    init() throws {
        func load(_ name: String) throws -> Data {
            guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
            }
            return try Data(contentsOf: url)
        }
        userInfo = try load("user.getinfo")
        friends = try load("user.getfriends")
        chartList = try load("user.getweeklychartlist")
        albumChart = try load("user.getweeklyalbumchart")
        albumInfo = try load("album.getinfo")
    }
}
