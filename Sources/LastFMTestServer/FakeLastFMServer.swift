import Foundation
import LocalTestServer
import Hummingbird
import NIOCore

/// Serves a `FakeLastFM` over real HTTP, speaking Last.fm's protocol at
/// `/2.0/`, plus a small control API under `/_fake/` for other processes
/// (browser tests, the command-line tests):
///
/// - `POST /_fake/faults` with a JSON `FaultRule` injects a fault;
/// - `DELETE /_fake/faults` clears them;
/// - `GET /_fake/requests` lists what was asked; `DELETE` forgets it;
/// - `GET /_fake/scrobbles` lists what `track.scrobble` received, and
///   `GET /_fake/scrobbled?user=U&count=N` answers once U has N;
/// - `GET /_fake/held?count=N` answers once N answers are held back by the
///   `held` fault; `POST /_fake/held/release` lets them go.
///
/// `/api/auth/` is Last.fm's web-authentication page (see `FakeLastFM+Auth`).
///
/// Where no other process needs the fake, `LastFMTransport.inProcess` and
/// `ArtworkUpstream.inProcess` hand the app's requests to it directly.
public enum FakeLastFMServer {
    public static func router(for fake: FakeLastFM) -> Router<BasicRequestContext> {
        let router = Router()
        let api: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            let reply = await fake.answer(RequestFields.query(request.uri.query ?? ""))
            return Response(
                status: HTTPResponse.Status(code: reply.status),
                headers: [.contentType: reply.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        }
        // Hummingbird 2 treats "2.0" and "2.0/" as one path (registering
        // both traps with "GET already has a handler"); this serves both.
        router.get("2.0", use: api)
        // The calls that change something (`track.scrobble`) come as a POSTed form.
        router.post("2.0") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let reply = await fake.answer(RequestFields.form(String(buffer: body)))
            return Response(status: HTTPResponse.Status(code: reply.status), headers: [.contentType: reply.contentType],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        }
        // For other processes: wait (without polling) until `user` has
        // received `count` scrobbles.
        router.get("_fake/scrobbled") { request, _ -> HTTPResponse.Status in
            let query = request.uri.queryParameters
            await fake.untilScrobbled(query.get("count", as: Int.self) ?? 1, by: query.get("user") ?? "")
            return .noContent
        }
        // Every scrobble received, by account name (`track.scrobble`).
        router.get("_fake/scrobbles") { _, _ -> Response in
            let data = try JSONEncoder().encode(await fake.scrobbles())
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        // Album art, as Last.fm's image host serves it: a generated cover
        // for any well-formed address.
        router.get("i/u/:size/:file") { _, context -> Response in
            guard let size = context.parameters.get("size"), let file = context.parameters.get("file"),
                  let png = await fake.image(size: size, file: file) else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: "image/png"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
        }
        // Web authentication: the page people approve an application on,
        // and its form, which sends them back to the application.
        router.get("api/auth") { request, _ -> Response in
            let query = request.uri.queryParameters
            guard let key = query.get("api_key"), let callback = query.get("cb"), !callback.isEmpty else {
                return Response(status: .badRequest, headers: [.contentType: "text/plain"],
                                body: ResponseBody(byteBuffer: ByteBuffer(string: "api_key and cb are required")))
            }
            let page = FakeLastFM.approvalPage(apiKey: key, callback: callback, names: await fake.knownNames())
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
        router.post("api/auth") { request, context -> Response in
            struct Approval: Decodable { let api_key: String; let cb: String; let user: String }
            let body = try await request.body.collect(upTo: 64 * 1024)
            let approval = try URLEncodedFormDecoder().decode(Approval.self, from: String(buffer: body))
            guard approval.api_key == fake.apiKey else { return Response(status: .forbidden) }
            let location = await fake.approve(user: approval.user, callback: approval.cb)
            return Response(status: .found, headers: [.location: location])
        }
        router.post("_fake/faults") { request, context -> HTTPResponse.Status in
            let rule = try await request.decode(as: FakeLastFM.FaultRule.self, context: context)
            await fake.inject(rule)
            return .noContent
        }
        // For other processes: wait (without polling) until `count` answers
        // are held back by the `held` fault, and let them all go.
        router.get("_fake/held") { request, _ -> HTTPResponse.Status in
            await fake.untilHolding(request.uri.queryParameters.get("count", as: Int.self) ?? 1)
            return .noContent
        }
        router.post("_fake/held/release") { _, _ -> HTTPResponse.Status in
            await fake.releaseHeld()
            return .noContent
        }
        router.delete("_fake/faults") { _, _ -> HTTPResponse.Status in
            await fake.clearFaults()
            return .noContent
        }
        router.delete("_fake/requests") { _, _ -> HTTPResponse.Status in
            await fake.clearLog()
            return .noContent
        }
        router.get("_fake/requests") { _, _ -> Response in
            let data = try JSONEncoder().encode(await fake.requests())
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        return router
    }

    /// Runs the server on `host`:`port` until cancelled. `port` 0 picks a
    /// free port; `onRunning` receives the API base URL.
    public static func run(_ fake: FakeLastFM, host: String = "127.0.0.1", port: Int = 0,
                           onRunning: @escaping @Sendable (String) async -> Void = { _ in }) async throws {
        try await LocalServer.run(router(for: fake), name: "fake-lastfm", host: host, port: port) { bound in
            await onRunning("http://\(host):\(bound)/2.0/")
        }
    }

    /// Runs the server for the duration of `body`, which gets the base URL.
    public static func withRunning<T: Sendable>(_ fake: FakeLastFM, _ body: @Sendable (String) async throws -> T) async throws -> T {
        try await LocalServer.withRunning({ onRunning in try await run(fake, onRunning: onRunning) }, body)
    }
}
