import Foundation
import HTTPServing
import Hummingbird
import NIOCore
import Stores
import Sync
import VinylogueCore

/// The Last.fm-compatible scrobbling API under `/2.0/`, for players that
/// let you set a Last.fm-style server address (GET or POST, form-encoded,
/// as Last.fm's clients send it; the query and the body are read together):
///
/// - `auth.getMobileSession`: `username` and `authToken`
///   (`md5(username + md5(password))`) or `password`, where the password is
///   the account's listen token from the settings page; answers a session
///   key (`MobileSignIn`).
/// - `track.scrobble`: up to 50 scrobbles (`LastFMScrobbleBatch`), stored
///   like `/1/`'s listens (`keepReceived`); the ignored ones are counted and
///   coded in the answer.
/// - `track.updateNowPlaying`: remembered in memory (`NowPlaying`).
///
/// Any `api_key` is accepted (as Libre.fm and Maloja do): this server cannot
/// know which keys players were given. For the same reason `api_sig` is not
/// checked: it is an MD5 over the parameters and the player's API secret,
/// which only Last.fm and the player know. What authorises a request is the
/// session key (`sk`), and the sign-in that made it. Answers are XML
/// unless `format=json`. Each session key (and each name signing in) may
/// make `ListenRateLimit`'s requests per window; past it, error 29.
///
/// With a site password (`VINYLOGUE_SITE_PASSWORD`) the read methods show
/// no more than the pages do: they need the password (HTTP Basic) or the
/// session key of a player signed in here, else error 17 with HTTP 401.
/// Signing in and scrobbling stay open: the listen token is their credential.
package struct LastFMScrobbleRoutes: Sendable {
    package let received: ReceivedListens
    package let clock: WallClock
    package let signIn: MobileSignIn
    package let limit: ListenRateLimit
    /// Last.fm's read methods over the archive.
    package let reads: LastFMReadAPI
    /// The site's password, when it has one.
    package let sitePassword: SitePassword?

    package init(received: ReceivedListens, clock: WallClock, signIn: MobileSignIn, limit: ListenRateLimit, reads: LastFMReadAPI, sitePassword: SitePassword?) {
        self.received = received
        self.clock = clock
        self.signIn = signIn
        self.limit = limit
        self.reads = reads
        self.sitePassword = sitePassword
    }

    /// 50 scrobbles of long names, percent-encoded, fit well within this.
    package static let maxBodyBytes = 1 << 20

    package func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/2.0") { request, _ in await self.answer(request) }
        router.post("/2.0") { request, _ in await self.answer(request) }
    }

    package func answer(_ request: Request) async -> Response {
        var fields = FormFields(encoded: request.uri.query ?? "").values
        let format: (String?) -> LastFMAnswer = { LastFMAnswer(format: $0?.lowercased() == "json" ? .json : .xml) }
        if request.method == .post {
            do {
                let body = try await request.body.collect(upTo: Self.maxBodyBytes)
                // pylast puts `username` in the address and the rest in the body.
                fields.merge(FormFields(encoded: String(buffer: body)).values) { _, body in body }
            } catch is NIOTooManyBytesError {
                // Last.fm's error, with HTTP's own status for it: a body
                // announced by its length gets the same 413 before it is read.
                var response = format(fields["format"]).error(
                    .invalidParameters, "The request is larger than \(Self.maxBodyBytes) bytes; send at most 50 scrobbles at a time.")
                response.status = .contentTooLarge
                return response
            } catch {
                return format(fields["format"]).error(.invalidParameters, "The request's body could not be read; send it again.")
            }
        }
        let answer = format(fields["format"])
        switch fields["method"]?.lowercased() {
        case "auth.getmobilesession": return await mobileSession(fields, answer)
        case "track.scrobble": return await authorised(fields, answer) { user, owner in await scrobble(fields, user, owner, answer) }
        case "track.updatenowplaying": return await authorised(fields, answer) { user, owner in await nowPlaying(fields, user, owner, answer) }
        case let method? where LastFMReadAPI.methods.contains(method):
            if let sitePassword, let refusal = await refusal(request, fields, answer, sitePassword) { return refusal }
            guard limit.take("2.0 read:" + ListenTokens.digest(fields["api_key"] ?? "")).allowed else {
                return answer.error(.rateLimitExceeded, "More than \(limit.limit) requests in \(Int(limit.window)) seconds with this api_key; wait and ask again.")
            }
            return await reads.answer(method, fields, answer)
        case nil: return answer.error(.invalidMethod, "Say which method with `method`: \(Self.methodList).")
        default: return answer.error(.invalidMethod, "This server answers \(Self.methodList).")
        }
    }

    /// Why a read method may not answer on a site kept private, if it may
    /// not: neither the site's password (HTTP Basic) nor the session key of
    /// a player signed in here came with it.
    package func refusal(_ request: Request, _ fields: [String: String], _ answer: LastFMAnswer, _ sitePassword: SitePassword) async -> Response? {
        if let key = fields["sk"], !key.isEmpty, case .user? = try? await signIn.resolve(sessionKey: key) { return nil }
        switch sitePassword.check(request) {
        case .allowed: return nil
        case .refused: return answer.privateSite()
        case .slowed(let seconds): return answer.slowed(seconds)
        }
    }

    package static let methodList = "auth.getMobileSession, track.scrobble, track.updateNowPlaying, user.getInfo, user.getWeeklyChartList, "
        + "user.getWeeklyAlbumChart, user.getWeeklyArtistChart, user.getWeeklyTrackChart, user.getRecentTracks, user.getFriends and album.getInfo"

    package func mobileSession(_ fields: [String: String], _ answer: LastFMAnswer) async -> Response {
        guard let username = fields["username"], !username.isEmpty, fields["authToken"] != nil || fields["password"] != nil else {
            return answer.error(.invalidParameters, "Send username and authToken (or password).")
        }
        guard limit.take("2.0 name:" + ListenTokens.digest(username.lowercased())).allowed else {
            return answer.error(.rateLimitExceeded, "Too many sign-ins with this user name; wait a few seconds.")
        }
        let outcome: MobileSignIn.Outcome
        do {
            outcome = try await signIn.signIn(username: username, authToken: fields["authToken"], password: fields["password"])
        } catch {
            return answer.error(.temporary, "The database could not be read to check the password; try again in a minute.")
        }
        switch outcome {
        case .session(let key, let name): return answer.session(name: name.value, key: key)
        case .refused:
            return answer.error(.authenticationFailed, "The username or the password is wrong. The password is the listen token "
                                + "made on this server's settings page; a new token replaces the old one.")
        case .nobody: return answer.error(.authenticationFailed, ListenBrainzRoutes.nobodySentence)
        case .unverifiable:
            return answer.error(.authenticationFailed, "This token was made before Last.fm-style sign-in was possible here (or the server's key "
                                + "changed): make a new token on the settings page and sign in with it.")
        }
    }

    /// Runs `body` for the archive user the request's session key submits for.
    private func authorised(_ fields: [String: String], _ answer: LastFMAnswer,
                            _ body: (Username, ListOwner) async -> Response) async -> Response {
        guard let key = fields["sk"], !key.isEmpty else {
            return answer.error(.invalidSessionKey, "There is no session key (sk): sign in with auth.getMobileSession first.")
        }
        guard limit.take("2.0 session:" + ListenTokens.digest(key)).allowed else {
            return answer.error(.rateLimitExceeded, "More than \(limit.limit) requests in \(Int(limit.window)) seconds with this session; wait and send them again.")
        }
        let resolution: ListenTokens.Resolution
        do {
            resolution = try await signIn.resolve(sessionKey: key)
        } catch {
            return answer.error(.temporary, "The database could not be read to check the session key; try again in a minute.")
        }
        switch resolution {
        case .user(let user, let owner): return await body(user, owner)
        case .invalid:
            return answer.error(.invalidSessionKey, "This session key is unknown or ended (a new listen token ends the sessions made with the old one); sign in again.")
        case .nobody: return answer.error(.invalidSessionKey, ListenBrainzRoutes.nobodySentence)
        }
    }

    package func scrobble(_ fields: [String: String], _ user: Username, _ owner: ListOwner, _ answer: LastFMAnswer) async -> Response {
        let batch: LastFMScrobbleBatch
        do {
            batch = try LastFMScrobbleBatch(fields: fields, now: clock.now)
        } catch {
            return answer.error(.invalidParameters, error.message)
        }
        do {
            try await received.keep(batch.accepted.map { ListenToForward(scrobble: $0, duration: nil) }, of: user, owner: owner)
        } catch {
            switch error {
            case .storage: return answer.error(.temporary, "The scrobbles could not be stored; nothing was kept. Send them again in a minute.")
            }
        }
        return answer.scrobbles(batch)
    }

    package func nowPlaying(_ fields: [String: String], _ user: Username, _ owner: ListOwner, _ answer: LastFMAnswer) async -> Response {
        guard let rawArtist = fields["artist"], let rawTrack = fields["track"] else {
            return answer.error(.invalidParameters, "Send artist and track.")
        }
        let rawAlbum = fields["album"] ?? "", albumArtist = fields["albumArtist"] ?? ""
        let reply = { (outcome: Result<Void, LastFMScrobbleBatch.IgnoredScrobble>) in
            answer.nowPlaying(artist: rawArtist, track: rawTrack, album: rawAlbum, albumArtist: albumArtist, outcome: outcome)
        }
        let artist: String, track: String
        switch LastFMScrobbleBatch.names(artist: rawArtist, track: rawTrack) {
        case .success(let names): (artist, track) = names
        case .failure(let ignored): return reply(.failure(ignored))
        }
        let album = (try? ListenFields.name(rawAlbum).get()) ?? ""
        let seconds = fields["duration"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        let scrobble = Scrobble(instant: Int64(clock.now.timeIntervalSince1970), artist: artist, album: album, track: track,
                                albumArtist: try? ListenFields.name(albumArtist).get())
        await received.startedPlaying(scrobble, seconds: seconds, for: user, owner: owner)
        return reply(.success(()))
    }
}
