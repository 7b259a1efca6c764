import Foundation
import HTTPTypes
import Hummingbird
import LocalTestServer
import NIOCore
import VinylogueCore

/// Serves a `FakeListenBrainz` over real HTTP, speaking ListenBrainz's API
/// under `/1/`, with a test API under `/test/` for other processes:
///
/// - `GET /1/user/{name}/listens?min_ts=&max_ts=&count=`: newest first;
///   `count` 25 by default and at most 1,000; with `max_ts` (alone or with
///   `min_ts`) the newest listens before it, with only `min_ts` the oldest
///   after it (both bounds exclusive, as ListenBrainz's are); an unknown
///   user is 404 `{"code": 404, "error": "Cannot find user: name"}`.
/// - `POST /1/submit-listens`, `GET /1/validate-token` with
///   `Authorization: Token …`.
/// - `GET /test/received`: `FakeListenBrainz.Received` as JSON
///   (`submissions`, `listensReceived`, `listens`, `playingNow`);
///   `DELETE /test/received` forgets it; `GET /test/kept?count=N` answers
///   once N listens are kept.
/// - `POST /test/faults` with a JSON `FaultRule` (for example
///   `{"fault": {"rateLimited": {"resetIn": 2}}, "endpoint": "submit-listens", "remaining": 1}`);
///   `DELETE /test/faults` clears them.
/// - `POST /test/rate-window` with a JSON `RateWindow` (`limit`, `seconds`, `enforced`).
/// - `GET /test/held?count=N` answers once N answers are held by the
///   `held` fault; `POST /test/held/release` lets them go.
/// - `GET /test/requests`: what was asked, with the status answered.
///
/// Every answer carries `X-RateLimit-Limit`, `-Remaining`, `-Reset-In`
/// and `-Reset`, as ListenBrainz's do.
public enum FakeListenBrainzServer {
    public static func router(for fake: FakeListenBrainz) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("1/user/:name/listens") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            var parameters: [String: String] = [:]
            for (k, v) in request.uri.queryParameters { parameters[String(k)] = String(v) }
            let query = parameters
            return await answer(fake, endpoint: "listens", user: name, query: query) {
                await listensReply(fake, user: name, query: query)
            }
        }
        router.post("1/submit-listens") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 10_240_000 + 1)
            let token = token(of: request)
            return await answer(fake, endpoint: "submit-listens", user: nil, query: [:]) {
                await submitReply(fake, token: token, body: Data(buffer: body))
            }
        }
        router.get("1/validate-token") { request, _ -> Response in
            let token = token(of: request) ?? request.uri.queryParameters.get("token").map { String($0) }
            return await answer(fake, endpoint: "validate-token", user: nil, query: [:]) {
                guard let token, let user = await fake.user(ofToken: token) else {
                    return .json(["code": 200, "message": "Token invalid.", "valid": false])
                }
                return .json(["code": 200, "message": "Token valid.", "valid": true, "user_name": user])
            }
        }
        router.get("test/received") { _, _ -> Response in
            let data = try JSONEncoder().encode(await fake.received())
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        // Answers once `count` listens are kept (waits without polling).
        router.get("test/kept") { request, _ -> HTTPResponse.Status in
            await fake.untilKept(request.uri.queryParameters.get("count", as: Int.self) ?? 1)
            return .noContent
        }
        router.delete("test/received") { _, _ -> HTTPResponse.Status in
            await fake.clearReceived()
            return .noContent
        }
        router.post("test/faults") { request, context -> HTTPResponse.Status in
            await fake.inject(try await request.decode(as: FakeListenBrainz.FaultRule.self, context: context))
            return .noContent
        }
        router.delete("test/faults") { _, _ -> HTTPResponse.Status in
            await fake.clearFaults()
            return .noContent
        }
        router.post("test/rate-window") { request, context -> HTTPResponse.Status in
            await fake.setRateWindow(try await request.decode(as: FakeListenBrainz.RateWindow.self, context: context))
            return .noContent
        }
        router.get("test/held") { request, _ -> HTTPResponse.Status in
            await fake.untilHolding(request.uri.queryParameters.get("count", as: Int.self) ?? 1)
            return .noContent
        }
        router.post("test/held/release") { _, _ -> HTTPResponse.Status in
            await fake.releaseHeld()
            return .noContent
        }
        router.get("test/requests") { _, _ -> Response in
            let data = try JSONEncoder().encode(await fake.requests())
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        return router
    }

    /// One answer: the honest reply, then the fault, with rate-limit headers.
    static func answer(_ fake: FakeListenBrainz, endpoint: String, user: String?, query: [String: String],
                       honest: @Sendable () async -> Reply) async -> Response {
        let (index, fault, rate) = await fake.begin(endpoint: endpoint, user: user, query: query)
        var reply: Reply
        switch fault {
        case .rateLimited(let resetIn)?:
            reply = .json(["code": 429, "error": "Rate limit exceeded. Try again in \(resetIn) seconds."], status: 429)
        case .httpStatus(let status)?:
            reply = Reply(status: status, contentType: "text/html", body: Data("<html><body><h1>\(status)</h1></body></html>".utf8))
        default:
            reply = await honest()
        }
        switch fault {
        case .delay(let ms)?: try? await Task.sleep(for: .milliseconds(ms))
        case .held?: await fake.hold()
        case .truncated?: reply.body = reply.body.prefix(max(1, reply.body.count / 2))
        case .malformed?: reply.body = Data("<html>Bad Gateway".utf8)
        case .wrongTypes?:
            reply = .json(["payload": ["count": "two", "user_id": user ?? "", "listens": [
                ["listened_at": "yesterday", "track_metadata": ["artist_name": 7, "track_name": ["x"]]],
            ]], "status": 1])
        case .oversized(let bytes)?:
            reply = .json(["payload": ["count": 0, "user_id": user ?? "", "listens": [Any](),
                                       "padding": String(repeating: "x", count: bytes)]])
        default: break
        }
        await fake.end(index, status: reply.status)
        var headers: HTTPFields = [.contentType: reply.contentType]
        headers[HTTPField.Name("X-RateLimit-Limit")!] = String(rate.limit)
        headers[HTTPField.Name("X-RateLimit-Remaining")!] = String(rate.remaining)
        headers[HTTPField.Name("X-RateLimit-Reset-In")!] = String(rate.resetIn)
        headers[HTTPField.Name("X-RateLimit-Reset")!] = String(rate.reset)
        return Response(status: HTTPResponse.Status(code: reply.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
    }

    static func token(of request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "token" else { return nil }
        return String(parts[1]).trimmingWhitespace()
    }

    /// Runs the server on `host`:`port` until cancelled. `port` 0 picks a
    /// free port; `onRunning` receives the API root (`http://host:port`,
    /// without `/1/`, as `LISTENBRAINZ_API_URL` takes it).
    public static func run(_ fake: FakeListenBrainz, host: String = "127.0.0.1", port: Int = 0,
                           onRunning: @escaping @Sendable (String) async -> Void = { _ in }) async throws {
        try await LocalServer.run(router(for: fake), name: "fake-listenbrainz", host: host, port: port) { bound in
            await onRunning("http://\(host):\(bound)")
        }
    }

    /// Runs the server for the duration of `body`, which gets the API root.
    public static func withRunning<T: Sendable>(_ fake: FakeListenBrainz, _ body: @Sendable (String) async throws -> T) async throws -> T {
        try await LocalServer.withRunning({ onRunning in try await run(fake, onRunning: onRunning) }, body)
    }
}

/// What the fake sends back.
struct Reply: Sendable {
    var status: Int
    var contentType: String
    var body: Data

    static func json(_ value: Any, status: Int = 200) -> Reply {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data()
        return Reply(status: status, contentType: "application/json", body: data)
    }

    static func error(_ status: Int, _ message: String) -> Reply {
        .json(["code": status, "error": message], status: status)
    }
}
