import Foundation
import HTTPServing
import HTTPTypes
import Hummingbird
import NIOCore
import Stores
import Sync
import VinylogueCore

/// The ListenBrainz-compatible API under `/1/`, so players and scrobblers
/// that speak ListenBrainz (pointed at this server's address) keep their
/// listens here: `POST /1/submit-listens` and `GET /1/validate-token`,
/// answered in ListenBrainz's shapes (`{"status": "ok"}`, `{"code": 400,
/// "error": "…"}`, 401 for a missing or wrong token).
///
/// A token submits only for its owner's archive user. Listens are kept
/// through `ReceivedListens.keep` (`ReceivedListenStore`: one
/// transaction for the whole payload and its outbox rows on SQLite, the
/// duplicate rule, the kept weekly charts) as `ScrobbleOrigin.received`;
/// with accounts the token's holder is read in that same transaction.
/// `playing_now` is remembered in memory only.
///
/// Each token may make `ListenRateLimit`'s requests per window; every
/// answer to a presented token carries ListenBrainz's `X-RateLimit-Limit`,
/// `X-RateLimit-Remaining`, `X-RateLimit-Reset-In` and `X-RateLimit-Reset`,
/// and a request over the limit is answered 429 with nothing stored.
package struct ListenBrainzRoutes: Sendable {
    package let received: ReceivedListens
    package let clock: WallClock
    package let tokens: ListenTokens
    package let limit: ListenRateLimit

    package init(received: ReceivedListens, clock: WallClock, tokens: ListenTokens, limit: ListenRateLimit) {
        self.received = received
        self.clock = clock
        self.tokens = tokens
        self.limit = limit
    }

    package func register<Context: RequestContext>(on router: Router<Context>) {
        router.post("/1/submit-listens") { request, _ in await self.submit(request) }
        router.get("/1/validate-token") { request, _ in await self.validate(request) }
    }

    package func submit(_ request: Request) async -> Response {
        guard let token = ListenTokens.presented(in: request) else {
            return Self.failure(.unauthorized, "You need to provide an Authorization header: Token followed by your token from the settings page.")
        }
        let decision = limit.take("1:" + ListenTokens.digest(token))
        return Self.withRateLimit(decision, decision.allowed ? await submit(request, token: token) : Self.tooMany(decision, window: limit.window))
    }

    private func submit(_ request: Request, token: String) async -> Response {
        // With accounts, the token's holder is read in the transaction that
        // keeps the listens (one trip to the database per submission); in
        // the household, or for a token not shaped like ours, it is read first.
        var sender: ListenSender?
        let oneStep = CSRFProtection.isWellFormed(token) ? tokens.sender : nil
        if oneStep == nil {
            switch await sendingFor(token) {
            case .success(let who): sender = who
            case .failure(let failure): return failure.response
            }
        }
        let submission: ListenSubmission
        switch await read(request) {
        case .success(let read): submission = read
        case .failure(let failure):
            // A token that may not send is told so before anything about the body.
            if sender == nil, case .failure(let refusal) = await sendingFor(token) { return refusal.response }
            return failure.response
        }
        if submission.type == .playingNow, sender == nil {
            switch await sendingFor(token) {
            case .success(let who): sender = who
            case .failure(let failure): return failure.response
            }
        }
        let listens = submission.listens.map { ListenToForward(scrobble: $0.scrobble, duration: $0.duration) }
        do {
            switch (submission.type, sender, oneStep) {
            case (.playingNow, let who?, _):
                await received.startedPlaying(listens[0].scrobble, seconds: listens[0].duration, for: who.user, owner: who.owner)
            case (_, let who?, _):
                try await received.keep(listens, of: who.user, owner: who.owner)
            case (_, nil, let rule?):
                guard try await received.keep(listens, sentWith: token, sender: rule) != nil else {
                    return Self.failure(.unauthorized, "Invalid authorization token.")
                }
            case (_, nil, nil):
                return Self.failure(.unauthorized, "Invalid authorization token.")
            }
        } catch {
            switch error {
            case .storage(let sentence): return Self.failure(.serviceUnavailable, "The listens could not be stored: \(sentence)")
            }
        }
        return WholeAnswer.json(Data(#"{"status":"ok"}"#.utf8))
    }

    /// Whom `token`'s listens are for, or the answer that says why it may not send.
    private func sendingFor(_ token: String) async -> Result<ListenSender, ResponseFailure> {
        switch await resolve(token) {
        case .success(.user(let name, let holder)): return .success(ListenSender(user: name, owner: holder))
        case .success(.invalid): return .failure(ResponseFailure(response: Self.failure(.unauthorized, "Invalid authorization token.")))
        case .success(.nobody): return .failure(ResponseFailure(response: Self.failure(.unauthorized, Self.nobodySentence)))
        case .failure(let failure): return .failure(failure)
        }
    }

    /// The submission in the body, or the answer that says what is wrong with it.
    private func read(_ request: Request) async -> Result<ListenSubmission, ResponseFailure> {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: ListenSubmission.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            return .failure(ResponseFailure(response: Self.failure(
                .contentTooLarge, "The payload is larger than \(ListenSubmission.maxBodyBytes) bytes; send at most 1000 listens at a time.")))
        } catch {
            return .failure(ResponseFailure(response: Self.failure(.badRequest, "The body could not be read.")))
        }
        do {
            return .success(try ListenSubmission(json: Data(buffer: body), now: clock.now))
        } catch {
            return .failure(ResponseFailure(response: Self.failure(.badRequest, error.message)))
        }
    }

    package func validate(_ request: Request) async -> Response {
        // Only from the header: ListenBrainz also takes `?token=`, but an
        // address ends up in logs and histories, and a token must not.
        guard let token = ListenTokens.presented(in: request) else {
            return Self.failure(.badRequest, "You need to provide an Authorization token.")
        }
        let decision = limit.take("1:" + ListenTokens.digest(token))
        return Self.withRateLimit(decision, decision.allowed ? await validate(token: token) : Self.tooMany(decision, window: limit.window))
    }

    private func validate(token: String) async -> Response {
        switch await resolve(token) {
        case .success(.user(let name, _)):
            return Self.json(ValidToken(code: 200, message: "Token valid.", valid: true, userName: name.value))
        case .success(.nobody):
            return Self.json(ValidToken(code: 200, message: Self.nobodySentence, valid: false, userName: nil))
        case .success(.invalid):
            return Self.json(ValidToken(code: 200, message: "Token invalid.", valid: false, userName: nil))
        case .failure(let failure):
            return failure.response
        }
    }

    /// ListenBrainz's 429.
    package static func tooMany(_ decision: ListenRateLimit.Decision, window: TimeInterval) -> Response {
        failure(.tooManyRequests, "You have sent more than \(decision.limit) requests with this token in \(Int(window)) seconds; "
                + "wait \(decision.resetIn) seconds and send them again.")
    }

    /// `response` with ListenBrainz's rate-limit headers (none when the limit is off).
    package static func withRateLimit(_ decision: ListenRateLimit.Decision, _ response: Response) -> Response {
        guard decision.limit > 0 else { return response }
        var response = response
        response.headers[HTTPField.Name("X-RateLimit-Limit")!] = String(decision.limit)
        response.headers[HTTPField.Name("X-RateLimit-Remaining")!] = String(decision.remaining)
        response.headers[HTTPField.Name("X-RateLimit-Reset-In")!] = String(decision.resetIn)
        response.headers[HTTPField.Name("X-RateLimit-Reset")!] = String(decision.resetAt)
        return response
    }

    package static let nobodySentence = "This server's list has nobody marked as you yet: add yourself first on its home page, then send listens."

    private func resolve(_ token: String) async -> Result<ListenTokens.Resolution, ResponseFailure> {
        do {
            return .success(try await tokens.resolve(token))
        } catch {
            return .failure(ResponseFailure(response: Self.failure(.serviceUnavailable,
                                                                   "The database could not be read to check the token; try again in a minute.")))
        }
    }

    private struct ResponseFailure: Error { let response: Response }

    private struct ValidToken: Encodable {
        package let code: Int
        package let message: String
        package let valid: Bool
        package let userName: String?

        package enum CodingKeys: String, CodingKey { case code, message, valid, userName = "user_name" }
    }

    private struct Failure: Encodable {
        package let code: Int
        package let error: String
    }

    package static func failure(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(Failure(code: status.code, error: message), status: status)
    }

    package static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data(#"{"code":500,"error":"Vinylogue could not describe the answer."}"#.utf8)
        return WholeAnswer.json(data, status: status)
    }
}
