import Foundation
import Logging
import VinylogueCore

/// The Last.fm API 2.0 gateway.
///
/// Every request goes through one shared rate limit, identical requests in
/// flight are joined into one, temporary failures (errors 8, 11, 16, HTTP 5xx,
/// timeouts) are retried a bounded number of times with exponential backoff,
/// and every failure arrives as a `SourceError` that says what to do next.
public final class LastFMClient: ChartSource, UserSource, AlbumSource, Sendable {
    public let configuration: LastFMConfiguration
    let transport: LastFMTransport
    let cache: (any LastFMResponseCache)?
    let clock: WallClock
    let logger: Logger
    /// The one budget of requests, views first (`PrioritisedPermits`).
    public let permits: PrioritisedPermits
    let inFlight = InFlightRequests<Data>()

    /// `permits` paces requests (default: this process's own `RateLimit` at
    /// the configured rate); give a shared one when several processes use
    /// one API key.
    public init(configuration: LastFMConfiguration, transport: LastFMTransport, cache: (any LastFMResponseCache)? = nil,
                permits: (any LastFMRequestPermits)? = nil, clock: WallClock, logger: Logger = Logger(label: "vinylogue.lastfm")) {
        self.configuration = configuration
        self.transport = transport
        self.cache = cache
        self.clock = clock
        self.logger = logger
        self.permits = PrioritisedPermits(permits ?? RateLimit(limit: configuration.requestsPerSecond, window: .seconds(1)))
    }

    // MARK: - Methods

    public func user(_ user: Username) async throws(SourceError) -> User {
        let request = LastFMRequest(method: "user.getinfo", parameters: ["user": user.value], subject: .user(user), policy: .days(1))
        return try await answer(UserInfoResponse.self, request) { raw throws(SourceError) in try raw.user.value() }
    }

    /// Everyone `user` follows, all pages.
    public func friends(of user: Username) async throws(SourceError) -> [User] {
        var friends: [User] = []
        var page = 1
        while true {
            let request = LastFMRequest(method: "user.getfriends", parameters: ["user": user.value, "limit": "200", "page": String(page)],
                                        subject: .user(user), policy: .hours(1))
            let response: FriendsResponse
            do {
                response = try await decode(FriendsResponse.self, request)
            } catch .notFound where page > 1 {
                break  // Past the last page, Last.fm may answer "no such page".
            }
            friends += try (response.friends.user?.items ?? []).map { raw throws(SourceError) in try raw.value() }
            let total = response.friends.attr?.totalPages?.value ?? 1
            if page >= total || (response.friends.user?.items.isEmpty ?? true) || page >= 50 { break }
            page += 1
        }
        return friends
    }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        let request = LastFMRequest(method: "user.getweeklychartlist", parameters: ["user": user.value], subject: .user(user),
                                    policy: .untilNextWeekCloses)
        return try await answer(ChartListResponse.self, request) { raw throws(SourceError) in try raw.value() }
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        let method = switch kind {
        case .album: "user.getweeklyalbumchart"
        case .artist: "user.getweeklyartistchart"
        case .track: "user.getweeklytrackchart"
        }
        // A week that has closed never changes again.
        let closed = week.toDate <= clock.now
        let request = LastFMRequest(method: method, parameters: ["user": user.value, "from": String(week.from), "to": String(week.to)],
                                    subject: .user(user), policy: closed ? .forever : .hours(1))
        return try await answer(WeeklyChartResponse.self, request) { raw throws(SourceError) in raw.value(user: user, kind: kind, week: week) }
    }

    /// By MusicBrainz id when there is one, else by artist and album name.
    /// Falls back to the names when Last.fm does not know the id.
    public func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
        var common: [String: String] = ["autocorrect": "1"]
        if let user { common["username"] = user.value }
        let subject = LastFMRequest.Subject.album(artist: artist, name: name)
        if let mbid, !mbid.isEmpty {
            let request = LastFMRequest(method: "album.getinfo", parameters: common.merging(["mbid": mbid]) { a, _ in a }, subject: subject, policy: .days(30))
            do {
                return try await answer(AlbumInfoResponse.self, request) { raw throws(SourceError) in raw.value() }
            } catch .notFound {
                // Fall through to a lookup by name.
            }
        }
        let request = LastFMRequest(method: "album.getinfo", parameters: common.merging(["artist": artist, "album": name]) { a, _ in a },
                                    subject: subject, policy: .days(30))
        return try await answer(AlbumInfoResponse.self, request) { raw throws(SourceError) in raw.value() }
    }

    /// One page (up to 200) of `user`'s scrobbles in `[from, to]`, newest
    /// first; the now-playing track is left out.
    public func recentTracks(of user: Username, from: Int64? = nil, to: Int64? = nil, page: Int = 1, limit: Int = 200) async throws(SourceError) -> ScrobblePage {
        var parameters = ["user": user.value, "page": String(page), "limit": String(limit)]
        if let from { parameters["from"] = String(from) }
        if let to { parameters["to"] = String(to) }
        let request = LastFMRequest(method: "user.getrecenttracks", parameters: parameters, subject: .user(user), policy: .never)
        return try await answer(RecentTracksResponse.self, request) { raw throws(SourceError) in raw.value() }
    }

    /// Completes a web sign-in: exchanges the `token` Last.fm handed back
    /// (after the person approved this application) for the account's name
    /// and session key, in one signed `auth.getSession` call. A token works
    /// once, so this is never retried, cached or joined with another call.
    /// Last.fm refuses an unknown token (error 4), a bad signature (13), a
    /// token nobody approved (14) and an expired or used one (15); those
    /// arrive as `.api(code:message:)`.
    public func session(forToken token: String) async throws(SourceError) -> LastFMSession {
        guard let key = configuration.apiKey, let secret = configuration.apiSecret else { throw .missingAPIKey }
        var request = LastFMRequest(method: "auth.getsession", parameters: ["token": token], subject: .signIn, policy: .never)
        request.signed = true
        let body: Data
        do {
            body = try await fetchOnce(request, url: request.url(base: configuration.baseURL, apiKey: key, secret: secret))
        } catch let error as SourceError {
            throw error
        } catch {
            throw .transport(detail: networkFailure(error))
        }
        let raw = try decodeBody(SessionResponse.self, body, request)
        guard let name = Username(validating: raw.session.name), !raw.session.key.isEmpty else {
            throw .malformedResponse(detail: "auth.getSession named no account")
        }
        return LastFMSession(name: name, key: raw.session.key)
    }

    // MARK: - Plumbing

    func decode<T: Decodable & SendableMetatype>(_ type: T.Type, _ request: LastFMRequest) async throws(SourceError) -> T {
        try await answer(type, request) { raw throws(SourceError) in raw }
    }

    /// `body` decoded as `R`; a body that does not decode is malformed (a
    /// well-formed error body is handled in `fetchOnce`).
    func decodeBody<R: Decodable>(_ type: R.Type, _ body: Data, _ request: LastFMRequest) throws(SourceError) -> R {
        do {
            return try JSONDecoder().decode(R.self, from: body)
        } catch {
            logger.warning("could not decode \(request.method): \(error)")
            throw .malformedResponse(detail: "\(request.method) could not be decoded")
        }
    }

    /// The value of a successful response: from the cache when fresh, else
    /// from Last.fm (joined with an identical request in flight); a stale
    /// cached copy stands in when Last.fm fails for a temporary reason, or
    /// has not answered by the task's `AnswerDeadline`.
    ///
    /// A body is stored only once it has decoded and converted to its value,
    /// so a truncated or wrong-shaped answer never enters the cache and never
    /// replaces a good copy; a stored body that no longer converts (written
    /// before this rule) counts as absent. Storing is part of the fetch, so
    /// an answer that arrives after the caller stopped waiting is kept.
    func answer<R: Decodable & SendableMetatype, T>(_ type: R.Type, _ request: LastFMRequest,
                                 _ convert: @escaping @Sendable (R) throws(SourceError) -> T) async throws(SourceError) -> T {
        guard let key = configuration.apiKey else { throw .missingAPIKey }
        let cached = await cache?.lookup(request.cacheKey)
        var saved: (entry: CachedResponse, value: T)?
        if let cached, let value = try? convert(decodeBody(R.self, cached.body, request)) { saved = (cached, value) }
        let now = clock.now
        if let saved, saved.entry.isFresh(at: now) { return saved.value }
        let url = request.url(base: configuration.baseURL, apiKey: key)
        let fetch = await inFlight.task(url) { [self] in
            let work: @Sendable () async throws -> Data = {
                // An identical request (here, or in another process sharing
                // the cache) may have stored its answer since the lookup
                // above: asking again would be a duplicate.
                if let stored = await self.cache?.lookup(request.cacheKey), stored.isFresh(at: self.clock.now),
                   (try? convert(self.decodeBody(R.self, stored.body, request))) != nil {
                    return stored.body
                }
                let body = try await self.fetchWithRetries(request, url: url)
                _ = try convert(self.decodeBody(R.self, body, request))
                if let expiry = request.policy.expiry(after: now) {
                    await self.cache?.store(body, for: request.cacheKey, expires: expiry)
                }
                return body
            }
            guard let cache = self.cache else { return try await work() }
            return try await cache.exclusively(request.cacheKey, work)
        }
        let outcome: Result<Data, any Error>
        if let deadline = AnswerDeadline.current {
            guard let arrived = await fetch.result(within: deadline.remaining) else {
                return try stale(saved?.value, after: .stillWaiting, request)
            }
            outcome = arrived
        } else {
            outcome = await fetch.result
        }
        do {
            return try convert(decodeBody(R.self, outcome.get(), request))
        } catch let error as SourceError {
            return try stale(saved?.value, after: error, request)
        } catch {
            throw .transport(detail: networkFailure(error))
        }
    }

    /// `saved` in place of a fresh answer when `error` is temporary (noted in
    /// `StaleResponses`); otherwise `error`.
    private func stale<T>(_ saved: T?, after error: SourceError, _ request: LastFMRequest) throws(SourceError) -> T {
        guard let saved, error.isTemporary else { throw error }
        StaleResponses.current?.record(error)
        logger.notice("serving a stale \(request.method) after: \(error.message)")
        return saved
    }

    private func fetchWithRetries(_ request: LastFMRequest, url: String) async throws -> Data {
        var attempt = 1
        var delay = configuration.retryBaseDelay
        while true {
            do {
                return try await fetchOnce(request, url: url)
            } catch let error as SourceError where Self.isRetryable(error) && attempt < configuration.maxAttempts {
                logger.info("retrying \(request.method) after: \(error.message)")
                try await Task.sleep(for: delay)
                attempt += 1
                delay *= 2
            }
        }
    }

    static func isRetryable(_ error: SourceError) -> Bool {
        switch error {
        case .temporarilyUnavailable, .timeout, .transport: true
        default: false
        }
    }

    func fetchOnce(_ request: LastFMRequest, url: String, form: String? = nil) async throws -> Data {
        let permit = try await permits.acquire()
        let reply: HTTPReply
        do {
            reply = try await transport.exchange(url, form, configuration.timeout, configuration.maxResponseBytes)
        } catch {
            await permits.release(permit)
            throw error
        }
        await permits.release(permit)
        if let apiError = try? JSONDecoder().decode(RawError.self, from: reply.body) {
            throw request.error(code: apiError.error.value, message: apiError.message?.value ?? "")
        }
        switch reply.status {
        case 200..<300: return reply.body
        case 429: throw SourceError.rateLimited
        case 500...: throw SourceError.temporarilyUnavailable(detail: "HTTP \(reply.status)")
        default: throw SourceError.api(code: reply.status, message: "HTTP \(reply.status)")
        }
    }
}
