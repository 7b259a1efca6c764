import Foundation
import LocalTestServer
import VinylogueCore

/// The state of a local ListenBrainz-compatible server: its users and their
/// listens, the tokens it accepts, what it received, the faults to inject
/// and the rate-limit window it reports.
///
/// Users: `rob` (a `DemoHistory` with seed 11 from 2011) and `alice` (seed
/// 23 from 2015), both generated week by week and so the same on every
/// machine, plus anyone `add(user:history:)` adds. Listens submitted with a
/// user's token join that user's listens. The token `test-token` belongs to
/// `rob`.
///
/// What tests read (`received()`, or `GET /test/received` over HTTP): every
/// submission and listen as it arrived (`submissions`, `listensReceived`,
/// counting repeats) and the listens kept once each by ListenBrainz's own
/// rule (`listens`): one listen per user, `listened_at` and track name.
public actor FakeListenBrainz {
    /// A fault to inject into matching requests. `rateLimited` and
    /// `httpStatus` answer instead of the server: a submission they hit is
    /// not recorded. The others answer after it: a submission they hit *is*
    /// recorded (`held`, `truncated`, `malformed`: ListenBrainz stored the
    /// listens and the answer was lost, the case that tests "sent again,
    /// kept once").
    public enum Fault: Sendable, Codable, Equatable {
        /// HTTP 429 with ListenBrainz's body, `X-RateLimit-Remaining: 0`
        /// and `X-RateLimit-Reset-In: resetIn`.
        case rateLimited(resetIn: Int)
        /// This HTTP status with an HTML body, as a proxy in front sends.
        case httpStatus(Int)
        /// The real answer after a delay.
        case delay(milliseconds: Int)
        /// The real answer held back until `releaseHeld()`: a timeout
        /// without a test waiting on a clock.
        case held
        /// The real answer cut off halfway (for a POST: after it was recorded).
        case truncated
        /// A body that is not JSON.
        case malformed
        /// JSON of the right shape with wrong types (`listened_at` as a
        /// string, `count` as a string).
        case wrongTypes
        /// A valid body of at least this many bytes.
        case oversized(bytes: Int)
    }

    /// Which requests a fault applies to, and how often.
    public struct FaultRule: Sendable, Codable {
        public var fault: Fault
        /// `listens`, `submit-listens` or `validate-token` (any when nil).
        public var endpoint: String?
        /// Only this user's listens, case-insensitive (any when nil).
        public var user: String?
        /// How many more requests it applies to (for ever when nil).
        public var remaining: Int?

        public init(_ fault: Fault, endpoint: String? = nil, user: String? = nil, times: Int? = nil) {
            self.fault = fault
            self.endpoint = endpoint
            self.user = user
            self.remaining = times
        }
    }

    /// One listen as the fake keeps it.
    public struct Listen: Sendable, Codable, Hashable {
        public var listenedAt: Int64
        public var artist: String
        public var track: String
        public var release: String?
        public var recordingMBID: String?
        public var releaseMBID: String?
        public var artistMBIDs: [String]?
        /// `additional_info.release_artist_name`: the album's artist.
        public var releaseArtist: String?
        /// `additional_info.release_group_mbid`.
        public var releaseGroupMBID: String?

        public init(listenedAt: Int64, artist: String, track: String, release: String? = nil,
                    recordingMBID: String? = nil, releaseMBID: String? = nil, artistMBIDs: [String]? = nil, releaseArtist: String? = nil,
                    releaseGroupMBID: String? = nil) {
            self.releaseArtist = releaseArtist
            self.releaseGroupMBID = releaseGroupMBID
            self.listenedAt = listenedAt
            self.artist = artist
            self.track = track
            self.release = release
            self.recordingMBID = recordingMBID
            self.releaseMBID = releaseMBID
            self.artistMBIDs = artistMBIDs
        }

        /// ListenBrainz keeps one listen per user, instant and track name.
        struct Identity: Hashable {
            let listenedAt: Int64
            let track: String
        }
        var identity: Identity { Identity(listenedAt: listenedAt, track: track) }
    }

    /// What the fake received on `POST /1/submit-listens` (accepted ones only).
    public struct Received: Sendable, Codable, Equatable {
        /// Accepted submissions, `playing_now` included.
        public var submissions: Int
        /// Listens in accepted `single` and `import` submissions, counting
        /// every repeat: more than `listens.count` means something was
        /// sent twice.
        public var listensReceived: Int
        /// The listens kept, once each (same user, `listened_at` and track
        /// is one listen, as ListenBrainz deduplicates), oldest first.
        public var listens: [ReceivedListen]
        /// The last `playing_now` per user.
        public var playingNow: [String: Listen]
    }

    /// One kept listen and whose token sent it.
    public struct ReceivedListen: Sendable, Codable, Equatable {
        public var user: String
        public var listen: Listen
    }

    /// One request as the fake saw it.
    public struct LoggedRequest: Sendable, Codable {
        public let endpoint: String
        public let user: String?
        public let query: [String: String]
        /// The status answered.
        public var status: Int?
    }

    /// The window `X-RateLimit-*` headers describe on every answer.
    public struct RateWindow: Sendable, Codable {
        /// Requests per window (`X-RateLimit-Limit`).
        public var limit: Int
        /// The window's length in seconds.
        public var seconds: Int
        /// Answer 429 once the window's requests exceed `limit`, as
        /// ListenBrainz does; off by default, so the headers only inform.
        public var enforced: Bool

        public init(limit: Int = 1000, seconds: Int = 10, enforced: Bool = false) {
            self.limit = limit
            self.seconds = seconds
            self.enforced = enforced
        }
    }

    let clock: WallClock
    private var users: [String: (name: String, history: DemoHistory?, extra: [Listen])] = [:]
    /// Histories made when first asked for (`rob`, `alice`): a history
    /// costs milliseconds to make, and most tests ask for neither.
    private var unmade: [String: @Sendable () -> DemoHistory] = [:]
    /// Each user's listens, newest first, through the end of a week (`listing(of:now:)`).
    private var listings: [String: (through: Int64, listens: [Listen])] = [:]
    private var tokens: [String: String]
    private var storedPlaylists: [StoredPlaylist] = []
    private var rules: [FaultRule] = []
    private(set) var log: [LoggedRequest] = []
    private var submissions = 0
    private var listensReceived = 0
    private var kept: [String: Set<Listen.Identity>] = [:]
    private var receivedList: [ReceivedListen] = []
    private var playingNow: [String: Listen] = [:]
    private var playingWaiters: [(user: String, track: String, waiter: CheckedContinuation<Void, Never>)] = []
    private let heldAnswers = HeldAnswers()
    /// Tests waiting until so many listens are kept.
    private var keptWaiters: [(count: Int, waiter: CheckedContinuation<Void, Never>)] = []
    private var window: RateWindow
    private var windowStart = ContinuousClock.now
    private var windowUsed = 0

    /// A fake whose "now" is `clock`'s: generated histories end there.
    /// `tokens` maps each accepted token to its user.
    public init(clock: WallClock, tokens: [String: String] = ["test-token": "rob"], rateWindow: RateWindow = RateWindow()) {
        self.clock = clock
        self.tokens = tokens
        self.window = rateWindow
        users["rob"] = ("rob", nil, [])
        unmade["rob"] = { DemoHistory(seed: 11, start: 1_294_574_400) }
        users["alice"] = ("alice", nil, [])
        unmade["alice"] = { DemoHistory(seed: 23, start: 1_420_977_600) }
    }

    /// Adds a user (`history` nil: no listens until some are added or submitted).
    /// The playlists people made, oldest first.
    public func playlists() -> [StoredPlaylist] { storedPlaylists }

    func keep(_ playlist: StoredPlaylist) { storedPlaylists.append(playlist) }

    func removePlaylist(_ mbid: String) { storedPlaylists.removeAll { $0.mbid == mbid } }

    func hasUser(_ name: String) -> Bool { users[name.lowercased()] != nil || tokens.values.contains { $0.lowercased() == name.lowercased() } }

    public func add(user: String, history: DemoHistory? = nil) {
        users[user.lowercased()] = (user, history, users[user.lowercased()]?.extra ?? [])
        unmade[user.lowercased()] = nil
        listings[user.lowercased()] = nil
    }

    /// Adds listens to `user`'s history as if submitted elsewhere (for
    /// late listens in sync tests); not counted as received.
    public func addListens(_ listens: [Listen], to user: String) {
        let key = user.lowercased()
        if users[key] == nil { users[key] = (user, nil, []) }
        users[key]!.extra += listens
        listings[key] = nil
    }

    /// Accepts `token` as `user`'s from now on.
    public func accept(token: String, for user: String) { tokens[token] = user }
    /// Stops accepting `token`, as ListenBrainz does once its user resets it.
    public func revoke(token: String) { tokens[token] = nil }

    public func inject(_ rule: FaultRule) { rules.append(rule) }
    public func clearFaults() { rules.removeAll() }
    public func setRateWindow(_ window: RateWindow) {
        self.window = window
        windowStart = .now
        windowUsed = 0
    }

    public func requests() -> [LoggedRequest] { log }
    public func clearLog() { log.removeAll() }

    /// Everything accepted on `POST /1/submit-listens` so far.
    public func received() -> Received {
        Received(submissions: submissions, listensReceived: listensReceived,
                 listens: receivedList.sorted { ($0.listen.listenedAt, $0.user) < ($1.listen.listenedAt, $1.user) },
                 playingNow: playingNow)
    }

    /// Forgets what was received (the listens stay in their users' histories).
    public func clearReceived() {
        submissions = 0
        listensReceived = 0
        receivedList.removeAll()
        playingNow.removeAll()
    }

    /// Lets every answer held by `Fault.held` go.
    public func releaseHeld() { heldAnswers.releaseAll() }

    /// Returns once `Fault.held` is holding at least `count` answers.
    public func untilHolding(_ count: Int) async { await heldAnswers.untilHolding(count) }

    func hold() async { await heldAnswers.hold() }

    // MARK: - What the routes use

    /// Logs the request, counts it in the rate window and picks its fault.
    func begin(endpoint: String, user: String?, query: [String: String]) -> (index: Int, fault: Fault?, rate: RateHeaders) {
        log.append(LoggedRequest(endpoint: endpoint, user: user, query: query))
        let now = ContinuousClock.now
        let length = Duration.seconds(window.seconds)
        while now - windowStart >= length { windowStart += length; windowUsed = 0 }
        windowUsed += 1
        let left = (windowStart + length) - now
        let resetIn = max(1, Int((Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18).rounded(.up)))
        var rate = RateHeaders(limit: window.limit, remaining: max(0, window.limit - windowUsed), resetIn: resetIn,
                               reset: Int64(clock.now.timeIntervalSince1970) + Int64(resetIn))
        var fault: Fault?
        if let i = rules.firstIndex(where: { rule in
            (rule.endpoint == nil || rule.endpoint == endpoint)
                && (rule.user == nil || rule.user?.lowercased() == user?.lowercased())
                && (rule.remaining ?? 1) > 0
        }) {
            fault = rules[i].fault
            if let left = rules[i].remaining { rules[i].remaining = left - 1 }
        } else if window.enforced && windowUsed > window.limit {
            fault = .rateLimited(resetIn: resetIn)
        }
        if case .rateLimited(let resetIn) = fault {
            rate.remaining = 0
            rate.resetIn = resetIn
            rate.reset = Int64(clock.now.timeIntervalSince1970) + Int64(resetIn)
        }
        return (log.count - 1, fault, rate)
    }

    func end(_ index: Int, status: Int) {
        if log.indices.contains(index) { log[index].status = status }
    }

    /// The user's display name and every listen in `(above, below)`, newest first.
    func listens(of user: String, above: Int64?, below: Int64?) -> (name: String, listens: ArraySlice<Listen>)? {
        let key = user.lowercased()
        guard let entry = users[key] else { return nil }
        let now = Int64(clock.now.timeIntervalSince1970)
        let all = listing(of: key, now: now)
        let low = above ?? Int64.min, high = min(below ?? Int64.max, now + 1)
        // Newest first: those at or after `high` lead, those at or before `low` trail.
        let start = Self.firstIndex(in: all) { $0.listenedAt < high }
        let end = Self.firstIndex(in: all) { $0.listenedAt <= low }
        return (entry.name, all[start..<max(start, end)])
    }

    /// Every listen of `user` (a key of `users`) the fake could answer with
    /// up to the end of the week `now` is in, newest first (by instant, then
    /// track), one per instant and track as ListenBrainz keeps them: the
    /// first made wins, generated before added. Made once and kept until the
    /// clock enters another week or listens are added: made for every
    /// request, fifteen years of them cost a debug build most of a second.
    private func listing(of key: String, now: Int64) -> [Listen] {
        let through = LastFMWeekCalendar.week(containing: now).from
        if let kept = listings[key], kept.through == through { return kept.listens }
        guard let entry = users[key] else { return [] }
        let history = history(of: key)
        var seen = Set<Listen.Identity>()
        // Generated weeks come in time order; kept newest first.
        var generated: [Listen] = []
        if let history {
            var week = LastFMWeekCalendar.week(containing: history.firstWeek.from)
            while week.from <= through {
                for scrobble in history.scrobbles(in: week) {
                    let listen = Listen(listenedAt: scrobble.instant, artist: scrobble.artist, track: scrobble.track,
                                        release: scrobble.album.isEmpty ? nil : scrobble.album, releaseMBID: scrobble.albumMBID)
                    if seen.insert(listen.identity).inserted { generated.append(listen) }
                }
                week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
            }
        }
        generated.reverse()
        Self.sortNewestFirst(&generated, alreadyByInstant: true)
        var added = entry.extra.filter { seen.insert($0.identity).inserted }
        Self.sortNewestFirst(&added, alreadyByInstant: false)
        let listens = Self.merged(generated, added)
        listings[key] = (through, listens)
        return listens
    }

    /// The generated history of `key`, made now if it was not yet.
    private func history(of key: String) -> DemoHistory? {
        if let history = users[key]?.history { return history }
        guard users[key] != nil, let make = unmade.removeValue(forKey: key) else { return nil }
        let history = make()
        users[key]!.history = history
        return history
    }

    /// Sorts by instant, then track, newest first; with `alreadyByInstant`
    /// only the runs that share an instant are sorted.
    private static func sortNewestFirst(_ listens: inout [Listen], alreadyByInstant: Bool) {
        guard alreadyByInstant else {
            listens.sort(by: isNewer)
            return
        }
        var start = 0
        while start < listens.count {
            var end = start + 1
            while end < listens.count && listens[end].listenedAt == listens[start].listenedAt { end += 1 }
            if end - start > 1 { listens[start..<end].sort(by: isNewer) }
            start = end
        }
    }

    /// The first index whose listen is `past` (false for all before it, true
    /// for all after), by halving.
    private static func firstIndex(in listens: [Listen], where past: (Listen) -> Bool) -> Int {
        var low = 0, high = listens.count
        while low < high {
            let middle = (low + high) / 2
            if past(listens[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Two lists sorted newest first, as one.
    private static func merged(_ a: [Listen], _ b: [Listen]) -> [Listen] {
        guard !b.isEmpty else { return a }
        var all: [Listen] = []
        all.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if isNewer(b[j], than: a[i]) { all.append(b[j]); j += 1 } else { all.append(a[i]); i += 1 }
        }
        all += a[i...]
        all += b[j...]
        return all
    }

    /// Whether `a` comes before `b` newest first: a later instant, or the
    /// same instant and a later track name.
    private static func isNewer(_ a: Listen, than b: Listen) -> Bool {
        a.listenedAt != b.listenedAt ? a.listenedAt > b.listenedAt : a.track > b.track
    }

    /// The user a token belongs to.
    func user(ofToken token: String) -> String? { tokens[token] }

    /// Records an accepted submission; `listens` are stored once each.
    func record(type: String, listens: [Listen], for user: String) {
        submissions += 1
        if type == "playing_now" {
            if let first = listens.first { playingNow[user] = first }
            let ready = playingWaiters.filter { $0.user == user && playingNow[user]?.track == $0.track }
            playingWaiters.removeAll { $0.user == user && playingNow[user]?.track == $0.track }
            ready.forEach { $0.waiter.resume() }
            return
        }
        listensReceived += listens.count
        for listen in listens where kept[user.lowercased(), default: []].insert(listen.identity).inserted {
            receivedList.append(ReceivedListen(user: user, listen: listen))
            addListens([listen], to: user)
        }
        let ready = keptWaiters.filter { $0.count <= receivedList.count }
        keptWaiters.removeAll { $0.count <= receivedList.count }
        ready.forEach { $0.waiter.resume() }
    }

    /// Returns once `user` said with `playing_now` that they play `track`.
    public func untilPlayingNow(_ track: String, by user: String) async {
        guard playingNow[user]?.track != track else { return }
        await withCheckedContinuation { playingWaiters.append((user, track, $0)) }
    }

    /// Returns once at least `count` listens are kept (`received().listens`).
    public func untilKept(_ count: Int) async {
        guard receivedList.count < count else { return }
        await withCheckedContinuation { keptWaiters.append((count, $0)) }
    }
}

/// The `X-RateLimit-*` values of one answer.
struct RateHeaders: Sendable {
    var limit: Int
    var remaining: Int
    var resetIn: Int
    var reset: Int64
}
