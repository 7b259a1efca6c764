import Foundation
import HTTPServing
import Hummingbird
import NIOCore
import Stores
import Synchronization
import VinylogueCore

/// The Audioscrobbler 1.2 protocol (Last.fm's "Realtime Submission
/// Protocol"), for players that speak only it: mpdscribble, mpdcron, Quod
/// Libet's plugin. A player is given the server's address and finds the
/// handshake at its root, as at `post.audioscrobbler.com`:
///
/// - Handshake, `GET /?hs=true&p=1.2&c=…&v=…&u=USER&t=TIME&a=AUTH`, where
///   `AUTH = md5(md5(password) + TIME)` and the password is the listen
///   token from Settings (checked through `MobileSignIn`'s sealed verifier:
///   the token is never stored); or with `api_key` and `sk`, a session key
///   from `/2.0/`'s sign-in. Answers `OK` with a session and the two
///   addresses below, `BADAUTH`, `BADTIME` (a clock more than
///   `allowedSkew` away; a handshake seen before is refused as a replay)
///   or `FAILED reason`.
/// - Now playing, `POST /audioscrobbler/nowplaying` (`s`, `a`, `t`, `b`,
///   `l`, `n`, `m`): shown on the person's chart page while it lasts.
/// - Submissions, `POST /audioscrobbler/submit` (`s`, and up to 50 of
///   `a[i] t[i] i[i] o[i] r[i] l[i] b[i] n[i] m[i]`): kept like `/1/`'s and
///   `/2.0/`'s listens (`ReceivedListens`: the duplicate rule, the kept
///   charts, forwarding, the fleet's notices), answered `OK` once stored.
///   A skipped track (`r[i]=S`) is not stored; a listen whose names or time
///   cannot be kept is left out and the others kept (a player would resend
///   a refused batch forever); a request that is not a submission at all
///   (an index past 49, a line without `a`, `t` or a whole-number `i`) is
///   `FAILED` with the line named, and nothing is stored. A session that is
///   unknown or ended (a new token ends them) is `BADSESSION`.
///
/// Answers are `text/plain`, with HTTP 200, as the protocol has them.
package struct AudioscrobblerRoutes: Sendable {
    package let received: ReceivedListens
    package let signIn: MobileSignIn
    package let limit: ListenRateLimit
    package let clock: WallClock
    package let address: PublicAddress

    package init(received: ReceivedListens, signIn: MobileSignIn, limit: ListenRateLimit, clock: WallClock, address: PublicAddress) {
        self.received = received
        self.signIn = signIn
        self.limit = limit
        self.clock = clock
        self.address = address
    }
    package let handshakes = SeenHandshakes()

    package static let submitPath = "/audioscrobbler/submit"
    package static let nowPlayingPath = "/audioscrobbler/nowplaying"
    /// How far a player's clock may be from this server's.
    package static let allowedSkew: Int64 = 15 * 60
    /// As `/2.0/`'s: 50 tracks of long names, percent-encoded, fit well
    /// within it (`EarlyBodyLimit` refuses more from the head).
    package static let maxBodyBytes = 1 << 20

    package func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/audioscrobbler") { request, _ in await self.handshake(request) }
        router.post(RouterPath(Self.submitPath)) { request, _ in await self.submit(request) }
        router.post(RouterPath(Self.nowPlayingPath)) { request, _ in await self.nowPlaying(request) }
    }

    package static func text(_ lines: String...) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: lines.joined(separator: "\n") + "\n")))
    }

    package func handshake(_ request: Request) async -> Response {
        let fields = FormFields(encoded: request.uri.query ?? "").values
        guard fields["hs"] == "true" else { return Self.text("FAILED Send a handshake: hs=true&p=1.2&c=…&v=…&u=USER&t=TIME&a=AUTH") }
        guard let version = fields["p"], version.hasPrefix("1.2") else { return Self.text("FAILED This server speaks protocol 1.2 (p=1.2)") }
        guard let user = fields["u"], !user.isEmpty else { return Self.text("FAILED Send the user name (u)") }
        guard limit.take("1.2 name:" + ListenTokens.digest(user.lowercased())).allowed else {
            return Self.text("FAILED Too many handshakes for this user; wait a minute")
        }
        if let key = fields["sk"], !key.isEmpty {
            // Last.fm's web-services variant: a session from /2.0/'s sign-in.
            switch (try? await signIn.resolve(sessionKey: key)) ?? .invalid {
            case .user: return answer(session: key)
            case .invalid, .nobody: return Self.text("BADAUTH")
            }
        }
        guard let time = fields["t"], let seconds = Int64(time), let auth = fields["a"], !auth.isEmpty else {
            return Self.text("FAILED Send the time (t) and the token (a = md5(md5(token) + t))")
        }
        let now = Int64(clock.now.timeIntervalSince1970)
        guard abs(seconds - now) <= Self.allowedSkew else { return Self.text("BADTIME") }
        guard handshakes.first(user: user, time: seconds, auth: auth, now: now, window: Self.allowedSkew) else { return Self.text("BADAUTH") }
        let outcome: MobileSignIn.Outcome
        do {
            outcome = try await signIn.signIn(username: user, authToken: nil, password: nil, handshake: (time, auth))
        } catch {
            return Self.text("FAILED The database could not be read to check the token; try again in a minute")
        }
        switch outcome {
        case .session(let key, _): return answer(session: key)
        case .refused, .unverifiable: return Self.text("BADAUTH")
        case .nobody: return Self.text("FAILED " + ListenBrainzRoutes.nobodySentence)
        }
    }

    package func answer(session: String) -> Response {
        Self.text("OK", session, address.base + Self.nowPlayingPath, address.base + Self.submitPath)
    }

    /// A request's form, or the answer to give instead.
    package enum FormRead {
        case fields([String: String])
        case refused(Response)
    }

    package func fields(of request: Request) async -> FormRead {
        do {
            let body = try await request.body.collect(upTo: Self.maxBodyBytes)
            return .fields(FormFields(encoded: String(buffer: body)).values)
        } catch is NIOTooManyBytesError {
            return .refused(Self.text("FAILED The request is larger than \(Self.maxBodyBytes) bytes; send at most 50 tracks at a time"))
        } catch {
            return .refused(Self.text("FAILED The request's body could not be read; send it again"))
        }
    }

    /// Runs `body` for whom the request's session submits.
    package func authorised(_ fields: [String: String], _ body: (Username, ListOwner) async -> Response) async -> Response {
        guard let key = fields["s"], !key.isEmpty else { return Self.text("BADSESSION") }
        guard limit.take("1.2 session:" + ListenTokens.digest(key)).allowed else {
            return Self.text("FAILED More than \(limit.limit) requests in \(Int(limit.window)) seconds with this session; wait and send them again")
        }
        switch (try? await signIn.resolve(sessionKey: key)) {
        case .user(let user, let owner)?: return await body(user, owner)
        case .invalid?, .nobody?: return Self.text("BADSESSION")
        case nil: return Self.text("FAILED The database could not be read to check the session; try again in a minute")
        }
    }

    package func submit(_ request: Request) async -> Response {
        let fields: [String: String]
        switch await self.fields(of: request) {
        case .fields(let read): fields = read
        case .refused(let answer): return answer
        }
        return await authorised(fields) { user, owner in
            let listens: [ListenToForward]
            do throws(Refusal) {
                listens = try Self.submissions(fields, now: clock.now)
            } catch {
                return Self.text("FAILED " + error.message)
            }
            do {
                try await received.keep(listens, of: user, owner: owner)
            } catch {
                return Self.text("FAILED The tracks could not be stored; nothing was kept. Send them again in a minute")
            }
            return Self.text("OK")
        }
    }

    package func nowPlaying(_ request: Request) async -> Response {
        let fields: [String: String]
        switch await self.fields(of: request) {
        case .fields(let read): fields = read
        case .refused(let answer): return answer
        }
        return await authorised(fields) { user, owner in
            guard case .success(let names) = LastFMScrobbleBatch.names(artist: fields["a"] ?? "", track: fields["t"] ?? "") else {
                return Self.text("FAILED Send the artist (a) and the track (t)")
            }
            let album = (try? ListenFields.name(fields["b"] ?? "").get()) ?? ""
            let seconds = fields["l"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
            let trackMBID = fields["m"].flatMap { ListenFields.isMBID($0) ? $0.lowercased() : nil }
            let scrobble = Scrobble(instant: Int64(clock.now.timeIntervalSince1970), artist: names.artist, album: album, track: names.track,
                                    trackMBID: trackMBID)
            await received.startedPlaying(scrobble, seconds: seconds, for: user, owner: owner)
            return Self.text("OK")
        }
    }

    /// Why a submission was refused whole.
    package struct Refusal: Error, Equatable {
        package let message: String
    }

    /// The listens of a submission's indexed fields: those that can be kept,
    /// skipped tracks (`r[i]=S`) left out.
    package static func submissions(_ fields: [String: String], now: Date) throws(Refusal) -> [ListenToForward] {
        var indices = Set<Int>()
        for key in fields.keys {
            guard let open = key.firstIndex(of: "["), key.hasSuffix("]") else { continue }
            let number = key[key.index(after: open)..<key.index(before: key.endIndex)]
            guard let index = Int(number), index >= 0, number.allSatisfy(\.isASCII) else {
                throw Refusal(message: "\(key) is not a submission field: lines are numbered from 0 to 49")
            }
            guard index < LastFMScrobbleBatch.maxScrobbles else { throw Refusal(message: "At most 50 tracks may be sent at once (lines 0 to 49)") }
            indices.insert(index)
        }
        guard !indices.isEmpty else { throw Refusal(message: "There are no tracks: send a[0], t[0] and i[0]") }
        let times = ListenFields.times(now: now)
        var listens: [ListenToForward] = []
        for index in indices.sorted() {
            func field(_ name: String) -> String? { fields["\(name)[\(index)]"] }
            guard let artist = field("a"), let track = field("t") else { throw Refusal(message: "Line \(index) has no artist (a) or track (t)") }
            guard let time = field("i").flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }) else {
                throw Refusal(message: "Line \(index) has no time (i) in whole seconds since 1970")
            }
            if field("r")?.uppercased() == "S" { continue }
            guard case .success(let names) = LastFMScrobbleBatch.names(artist: artist, track: track),
                  ListenFields.check(time, in: times) == .believable else { continue }
            let album = (try? ListenFields.name(field("b") ?? "").get()) ?? ""
            let trackMBID = field("m").flatMap { ListenFields.isMBID($0) ? $0.lowercased() : nil }
            let seconds = field("l").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
            listens.append(ListenToForward(scrobble: Scrobble(instant: time, artist: names.artist, album: album, track: names.track,
                                                               trackMBID: trackMBID), duration: seconds))
        }
        return listens
    }
}

/// The handshakes seen in the last window (each user's time and token
/// proof), so that one overheard cannot be replayed for a session of its
/// own while its time is still accepted. Kept in this process: in a fleet,
/// a replay sent to another instance within the window is not caught.
package final class SeenHandshakes: Sendable {
    private let seen = Mutex<[String: Int64]>([:])

    /// Whether this is the first time `user` handshakes with `time` and
    /// `auth`; forgets handshakes older than `window`.
    package func first(user: String, time: Int64, auth: String, now: Int64, window: Int64) -> Bool {
        let key = user.lowercased() + "\u{1F}" + String(time) + "\u{1F}" + auth.lowercased()
        return seen.withLock { seen in
            if seen.count > 10_000 { seen = seen.filter { now - $0.value <= 2 * window } }
            guard seen[key] == nil else { return false }
            seen[key] = time
            return true
        }
    }
}

/// A handshake sent to the server's root (`GET /?hs=true…`), where players
/// look for it: answered by `AudioscrobblerRoutes` instead of the users page.
package struct AudioscrobblerHandshakeMiddleware<Context: RequestContext>: RouterMiddleware {
    package let routes: AudioscrobblerRoutes

    package init(routes: AudioscrobblerRoutes) {
        self.routes = routes
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get, request.uri.path == "/", let query = request.uri.query, query.contains("hs=true") else {
            return try await next(request, context)
        }
        return await routes.handshake(request)
    }
}
