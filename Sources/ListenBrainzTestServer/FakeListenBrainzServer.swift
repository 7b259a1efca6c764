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
///
/// Where no other process needs the fake, `ListenBrainzTransport.inProcess`
/// hands the client's requests to it directly.
public enum FakeListenBrainzServer {
    public static func router(for fake: FakeListenBrainz) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("1/user/:name/listens") { request, context -> Response in
            let call = FakeListenBrainz.Call.listens(user: context.parameters.get("name") ?? "", query: RequestFields.query(request.uri.query ?? ""))
            return response(await fake.answer(call))
        }
        router.post("1/submit-listens") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 10_240_000 + 1)
            return response(await fake.answer(.submit(token: token(of: request), body: Data(buffer: body))))
        }
        router.get("1/validate-token") { request, _ -> Response in
            let token = token(of: request) ?? request.uri.queryParameters.get("token").map { String($0) }
            return response(await fake.answer(.validateToken(token)))
        }
        router.get("1/user/:name/playlists") { request, context -> Response in
            let call = FakeListenBrainz.Call.userPlaylists(user: context.parameters.get("name") ?? "", token: token(of: request),
                                                           query: RequestFields.query(request.uri.query ?? ""))
            return response(await fake.answer(call))
        }
        router.post("1/playlist/create") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 10_240_000 + 1)
            return response(await fake.answer(.createPlaylist(token: token(of: request), body: Data(buffer: body))))
        }
        router.post("1/playlist/:mbid/delete") { request, context -> Response in
            response(await fake.answer(.deletePlaylist(token: token(of: request), mbid: context.parameters.get("mbid") ?? "")))
        }
        router.get("1/playlist/:mbid") { _, context -> Response in
            response(await fake.answer(.playlist(mbid: context.parameters.get("mbid") ?? "")))
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

    /// An answer as an HTTP response, with its `X-RateLimit-*` headers.
    static func response(_ answer: FakeListenBrainz.Answer) -> Response {
        var headers: HTTPFields = [.contentType: answer.contentType]
        headers[HTTPField.Name("X-RateLimit-Limit")!] = String(answer.rate.limit)
        headers[HTTPField.Name("X-RateLimit-Remaining")!] = String(answer.rate.remaining)
        headers[HTTPField.Name("X-RateLimit-Reset-In")!] = String(answer.rate.resetIn)
        headers[HTTPField.Name("X-RateLimit-Reset")!] = String(answer.rate.reset)
        return Response(status: HTTPResponse.Status(code: answer.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
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
