import AsyncHTTPClient
import Foundation
import VinylogueCore

/// One page of a user's public listens, newest first.
public struct ListenPage: Sendable, Hashable {
    /// The listens, as scrobbles, newest first (listens without an artist
    /// or a track name are left out).
    public let listens: [Scrobble]
    /// How many listens ListenBrainz sent, left-out ones included: fewer
    /// than asked for means the range holds no more.
    public let count: Int
    /// The user's newest and oldest listens overall, when ListenBrainz says.
    public let latestListenTs: Int64?
    public let oldestListenTs: Int64?
    /// The user's name in ListenBrainz's own spelling (`user_id`).
    public let userName: String?
}

/// What became of one `submit`: the forwarding outbox's three cases.
public enum SubmitOutcome: Sendable, Hashable {
    /// ListenBrainz took the listens (HTTP 200). Sending them again is
    /// harmless: it keeps one listen per user, instant and track.
    case accepted
    /// Try again later (429, 5xx, a timeout, the network, an unreadable
    /// answer). `retryAfter` is ListenBrainz's `X-RateLimit-Reset-In` when
    /// it gave one.
    case temporaryFailure(ListenBrainzFailure, retryAfter: Duration?)
    /// Sending the same again fails the same way: the token is wrong or
    /// revoked (`.invalidToken`), or ListenBrainz refused the payload
    /// (`.refused` with its status and reason, such as 400 or 413).
    case permanentFailure(ListenBrainzFailure)
}

/// The ListenBrainz API gateway: reads a user's public listens (for syncs)
/// and submits listens with a user's token (for forwarding).
///
/// Every request first takes its turn from a `RateBudget` fed by the
/// `X-RateLimit-*` headers of earlier answers, so a spent window is waited
/// out instead of hammered. Reads (`listens`, `validate`) retry temporary
/// failures with doubling backoff and wait `X-RateLimit-Reset-In` after a
/// 429; `submit` tries once and says what happened. Answers are capped in
/// size and time; every failure is a `SourceError.listenBrainz` sentence.
public final class ListenBrainzClient: Sendable {
    public let configuration: ListenBrainzConfiguration
    let transport: ListenBrainzTransport
    let pacing: ListenBrainzPacing
    let budget = RateBudget()

    public init(configuration: ListenBrainzConfiguration, transport: ListenBrainzTransport, pacing: ListenBrainzPacing = .continuous) {
        self.configuration = configuration
        self.transport = transport
        self.pacing = pacing
    }

    /// Over HTTP: `http` is shared with the rest of the process; the
    /// client does not shut it down.
    public convenience init(configuration: ListenBrainzConfiguration, http: HTTPClient, pacing: ListenBrainzPacing = .continuous) {
        self.init(configuration: configuration, transport: .live(http), pacing: pacing)
    }

    /// ListenBrainz's most listens per request.
    public static let maxCount = 1000

    /// Up to `count` (at most 1,000) of `user`'s listens with `listened_at`
    /// strictly between `minTs` and `maxTs`, newest first. With `maxTs`
    /// (alone or with `minTs`) the newest ones before it; with only
    /// `minTs` the oldest ones after it, as ListenBrainz pages. `user` is
    /// ListenBrainz's own name (`Username.serviceName`).
    public func listens(of user: String, minTs: Int64? = nil, maxTs: Int64? = nil, count: Int = ListenBrainzClient.maxCount) async throws(SourceError) -> ListenPage {
        var query = ["count=\(min(max(1, count), Self.maxCount))"]
        if let minTs { query.append("min_ts=\(minTs)") }
        if let maxTs { query.append("max_ts=\(maxTs)") }
        let url = "\(configuration.apiRoot)/1/user/\(Self.pathSegment(user))/listens?\(query.joined(separator: "&"))"
        let reply = try await read(url, notFound: .userNotFound(user: user))
        let answer: ListensAnswer
        do {
            answer = try JSONDecoder().decode(ListensAnswer.self, from: reply.body)
        } catch {
            throw .listenBrainz(.malformedResponse(detail: Self.decodingDetail(error)))
        }
        return ListenPage(listens: answer.payload.listens.compactMap(\.scrobble), count: answer.payload.listens.count,
                          latestListenTs: answer.payload.latest_listen_ts, oldestListenTs: answer.payload.oldest_listen_ts,
                          userName: answer.payload.user_id)
    }

    /// Whose `token` is: ListenBrainz's name for its user, or nil when
    /// ListenBrainz does not accept it.
    public func validate(token: String) async throws(SourceError) -> String? {
        let reply = try await read("\(configuration.apiRoot)/1/validate-token", token: token, notFound: .refused(status: 404, reason: ""))
        guard let answer = try? JSONDecoder().decode(TokenAnswer.self, from: reply.body) else {
            throw .listenBrainz(.malformedResponse(detail: "the token check was not ListenBrainz's JSON"))
        }
        return answer.valid ? answer.user_name : nil
    }

    /// Submits `listens` (1 to 1,000; one is sent as `single`, more as
    /// `import`) with a user's token, once. Their instants, names and
    /// MusicBrainz ids are sent as ListenBrainz documents them. An empty
    /// list is accepted without a request; more than 1,000 are refused
    /// without one.
    public func submit(_ listens: [Scrobble], token: String) async -> SubmitOutcome {
        guard !listens.isEmpty else { return .accepted }
        guard listens.count <= Self.maxCount else {
            return .permanentFailure(.refused(status: 400, reason: "more than \(Self.maxCount) listens in one submission"))
        }
        return await submit(Submission(listens), token: token)
    }

    /// Tells ListenBrainz the user is playing `scrobble` now (`playing_now`,
    /// with its length in seconds when known), once.
    public func playingNow(_ scrobble: Scrobble, duration: Int64?, token: String) async -> SubmitOutcome {
        await submit(Submission(playingNow: scrobble, duration: duration), token: token)
    }

    private func submit(_ submission: Submission, token: String) async -> SubmitOutcome {
        let body: Data
        do { body = try JSONEncoder().encode(submission) } catch {
            return .permanentFailure(.refused(status: 400, reason: "the listens could not be written as JSON"))
        }
        let reply: Reply
        do {
            reply = try await exchange("\(configuration.apiRoot)/1/submit-listens", method: .post, token: token, body: body)
        } catch {
            return .temporaryFailure(error, retryAfter: nil)
        }
        switch reply.status {
        case 200: return .accepted
        case 401: return .permanentFailure(.invalidToken)
        case 429: return .temporaryFailure(.rateLimited(retryAfter: reply.resetIn), retryAfter: reply.resetIn.map { .seconds($0) })
        case 500...: return .temporaryFailure(.unavailable(status: reply.status), retryAfter: reply.resetIn.map { .seconds($0) })
        default: return .permanentFailure(.refused(status: reply.status, reason: Self.reason(reply.body)))
        }
    }

    // MARK: - Requests

    struct Reply: Sendable {
        let status: Int
        let body: Data
        let resetIn: Int?
    }

    /// A GET with retries: 429 waits `Reset-In`, 5xx, timeouts, network
    /// failures and unreadable bodies back off; 404 is `notFound`, 401 a
    /// bad token, any other 4xx a refusal with ListenBrainz's reason.
    func read(_ url: String, token: String? = nil, notFound: ListenBrainzFailure) async throws(SourceError) -> Reply {
        var delay = configuration.backoff
        var attempt = 1
        while true {
            let failure: ListenBrainzFailure
            var wait = delay
            do {
                let reply = try await exchange(url, method: .get, token: token, body: nil)
                switch reply.status {
                case 200..<300:
                    return reply
                case 404: throw SourceError.listenBrainz(notFound)
                case 401: throw SourceError.listenBrainz(.invalidToken)
                case 429:
                    failure = .rateLimited(retryAfter: reply.resetIn)
                    wait = min(.seconds(reply.resetIn ?? 1), configuration.longestWait)
                case 500...: failure = .unavailable(status: reply.status)
                default: throw SourceError.listenBrainz(.refused(status: reply.status, reason: Self.reason(reply.body)))
                }
            } catch let error as ListenBrainzFailure {
                failure = error
            } catch let error as SourceError {
                throw error
            } catch {
                failure = .transport(detail: "a network error")
            }
            guard attempt < configuration.attempts else { throw .listenBrainz(failure) }
            do { try await pacing.sleep(wait) } catch { throw .listenBrainz(failure) }
            attempt += 1
            delay = delay * 2
        }
    }

    /// One request, after its turn in the rate budget; notes the answer's
    /// rate-limit headers.
    func exchange(_ url: String, method: ListenBrainzTransport.Request.Method, token: String?, body: Data?) async throws(ListenBrainzFailure) -> Reply {
        let wait = await budget.take(now: pacing.now(), longest: configuration.longestWait)
        if wait > .zero {
            do { try await pacing.sleep(wait) } catch { throw .timeout }
        }
        let head = try await transport.send(.init(url: url, method: method, token: token, body: body, userAgent: configuration.userAgent,
                                                  timeout: configuration.timeout, maxBytes: configuration.maxResponseBytes))
        await budget.note(remaining: head.remaining, resetIn: head.resetIn, now: pacing.now())
        return Reply(status: head.status, body: try await head.body(), resetIn: head.resetIn)
    }

    /// A user name as one URL path segment (`Username` allows only
    /// URL-safe characters; anything else is escaped all the same).
    static func pathSegment(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? name
    }

    /// ListenBrainz's `error` sentence from an error body, or "".
    static func reason(_ body: Data) -> String {
        guard let answer = try? JSONDecoder().decode(ErrorAnswer.self, from: body) else { return "" }
        return String(answer.error.prefix(200))
    }

    /// Which part of the answer did not decode, without echoing it.
    static func decodingDetail(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let c)? where c.codingPath.isEmpty: "the answer is not complete JSON"
        case .dataCorrupted(let c)?: "“\(path(c.codingPath))” is not readable"
        case .typeMismatch(_, let c)?: "“\(path(c.codingPath))” has the wrong type"
        case .keyNotFound(let key, let c)?: "“\(path(c.codingPath + [key]))” is missing"
        case .valueNotFound(_, let c)?: "“\(path(c.codingPath))” is empty"
        default: "the answer is not ListenBrainz's JSON"
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }
}
