import Foundation
import VinylogueCore

extension FakeListenBrainz {
    /// One call of ListenBrainz's API, however it arrived (over HTTP, or
    /// handed over in this process).
    public enum Call: Sendable {
        /// `GET /1/user/{name}/listens` with its query.
        case listens(user: String, query: [String: String])
        /// `POST /1/submit-listens` with the token and the body.
        case submit(token: String?, body: Data)
        /// `GET /1/validate-token`.
        case validateToken(String?)
        /// `POST /1/playlist/create` with the token and the JSPF body.
        case createPlaylist(token: String?, body: Data)
        /// `GET /1/user/{name}/playlists` with the asker's token, if any.
        case userPlaylists(user: String, token: String?, query: [String: String])
        /// `POST /1/playlist/{mbid}/delete`.
        case deletePlaylist(token: String?, mbid: String)
        /// `GET /1/playlist/{mbid}`.
        case playlist(mbid: String)
    }

    /// What the fake answers a call, with its `X-RateLimit-*` values.
    public struct Answer: Sendable {
        public var status: Int
        public var contentType: String
        public var body: Data
        var rate: RateHeaders
        /// `X-RateLimit-Remaining`.
        public var remaining: Int { rate.remaining }
        /// `X-RateLimit-Reset-In`, in seconds.
        public var resetIn: Int { rate.resetIn }
    }

    /// Answers one call: the honest reply, then the fault, if any, as
    /// ListenBrainz's API would (logged, counted in the rate window).
    public nonisolated func answer(_ call: Call) async -> Answer {
        switch call {
        case .listens(let user, let query):
            return await answer(endpoint: "listens", user: user, query: query) { [self] in
                await Self.listensReply(self, user: user, query: query)
            }
        case .submit(let token, let body):
            return await answer(endpoint: "submit-listens", user: nil, query: [:]) { [self] in
                await Self.submitReply(self, token: token, body: body)
            }
        case .validateToken(let token):
            return await answer(endpoint: "validate-token", user: nil, query: [:]) { [self] in
                guard let token, let user = await self.user(ofToken: token) else {
                    return .json(["code": 200, "message": "Token invalid.", "valid": false])
                }
                return .json(["code": 200, "message": "Token valid.", "valid": true, "user_name": user])
            }
        case .createPlaylist(let token, let body):
            return await answer(endpoint: "playlist-create", user: nil, query: [:]) { [self] in
                await Self.createPlaylistReply(self, token: token, body: body)
            }
        case .userPlaylists(let user, let token, let query):
            return await answer(endpoint: "user-playlists", user: user, query: query) { [self] in
                await Self.userPlaylistsReply(self, user: user, token: token, query: query)
            }
        case .deletePlaylist(let token, let mbid):
            return await answer(endpoint: "playlist-delete", user: nil, query: [:]) { [self] in
                await Self.deletePlaylistReply(self, token: token, mbid: mbid)
            }
        case .playlist(let mbid):
            return await answer(endpoint: "playlist", user: nil, query: [:]) { [self] in
                await Self.playlistReply(self, mbid: mbid)
            }
        }
    }

    /// The honest reply, then the fault, with rate-limit values.
    private nonisolated func answer(endpoint: String, user: String?, query: [String: String],
                                    honest: @Sendable () async -> Reply) async -> Answer {
        let (index, fault, rate) = await begin(endpoint: endpoint, user: user, query: query)
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
        case .held?: await hold()
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
        await end(index, status: reply.status)
        return Answer(status: reply.status, contentType: reply.contentType, body: reply.body, rate: rate)
    }

    /// ListenBrainz's most listens per request (`MAX_ITEMS_PER_GET`).
    static let maxItemsPerGet = 1000

    static func listensReply(_ fake: FakeListenBrainz, user: String, query: [String: String]) async -> Reply {
        func number(_ key: String) -> Int64?? {
            guard let raw = query[key] else { return .some(nil) }
            guard let n = Int64(raw), n >= 0 else { return nil }
            return .some(n)
        }
        guard let minTs = number("min_ts"), let maxTs = number("max_ts"), let countParameter = number("count") else {
            return .error(400, "Invalid parameter: min_ts, max_ts and count must be non-negative integers.")
        }
        if let minTs, let maxTs, minTs >= maxTs { return .error(400, "min_ts should be less than max_ts") }
        guard let (name, all) = await fake.listens(of: user, above: minTs, below: maxTs) else {
            return .error(404, "Cannot find user: \(user)")
        }
        let count = Int(min(countParameter ?? 25, Int64(maxItemsPerGet)))
        // With only min_ts, the oldest listens after it; otherwise the newest.
        let chosen = (minTs != nil && maxTs == nil) ? Array(all.suffix(count)) : Array(all.prefix(count))
        let listens = chosen.map { l in
            ListensAnswer.Listen(
                inserted_at: l.listenedAt + 30, listened_at: l.listenedAt, user_name: name, recording_msid: msid(l),
                track_metadata: .init(artist_name: l.artist, track_name: l.track, release_name: l.release,
                                      additional_info: .init(submission_client: "fake-listenbrainz", recording_mbid: l.recordingMBID,
                                                             release_mbid: l.releaseMBID, artist_mbids: l.artistMBIDs,
                                                             release_artist_name: l.releaseArtist,
                                                             release_group_mbid: l.releaseGroupMBID)))
        }
        return .encoded(ListensAnswer(payload: .init(count: listens.count, listens: listens, user_id: name,
                                                     latest_listen_ts: all.first?.listenedAt, oldest_listen_ts: all.last?.listenedAt)))
    }

    /// `GET /1/user/{name}/listens`'s answer as ListenBrainz writes it
    /// (absent values are left out). Encoded, not built as dictionaries:
    /// `JSONSerialization` cast every value, the fake's largest cost in a
    /// debug build.
    struct ListensAnswer: Encodable {
        struct Payload: Encodable {
            let count: Int
            let listens: [Listen]
            let user_id: String
            let latest_listen_ts: Int64?
            let oldest_listen_ts: Int64?
        }
        struct Listen: Encodable {
            let inserted_at: Int64
            let listened_at: Int64
            let user_name: String
            let recording_msid: String
            let track_metadata: Metadata
        }
        struct Metadata: Encodable {
            let artist_name: String
            let track_name: String
            let release_name: String?
            let additional_info: AdditionalInfo
        }
        struct AdditionalInfo: Encodable {
            let submission_client: String
            let recording_mbid: String?
            let release_mbid: String?
            let artist_mbids: [String]?
            let release_artist_name: String?
            let release_group_mbid: String?
        }
        let payload: Payload
    }

    /// A stable UUID-shaped id for a listen, as ListenBrainz's `recording_msid`.
    static func msid(_ l: FakeListenBrainz.Listen) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in "\(l.artist)\u{1F}\(l.track)".utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let hex = String(format: "%016llx%016llx", h, h ^ 0x5bd1_e995_5bd1_e995)
        let c = Array(hex)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }

    /// `POST /1/submit-listens`, checked as ListenBrainz checks the parts a
    /// forwarder can get wrong; anything accepted is recorded.
    static func submitReply(_ fake: FakeListenBrainz, token: String?, body: Data) async -> Reply {
        guard let token, let user = await fake.user(ofToken: token) else {
            return .error(401, "You need to provide an Authorization header.")
        }
        guard body.count <= 10_240_000 else { return .error(413, "Payload too large.") }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            return .error(400, "Cannot parse JSON document.")
        }
        guard let type = object["listen_type"] as? String, ["single", "import", "playing_now"].contains(type) else {
            return .error(400, "JSON document must contain listen_type as one of single, import, playing_now.")
        }
        guard let payload = object["payload"] as? [[String: Any]], !payload.isEmpty else {
            return .error(400, "JSON document does not contain any listens in payload.")
        }
        if type != "import" && payload.count > 1 { return .error(400, "JSON document should contain exactly one listen for \(type).") }
        if payload.count > 1000 { return .error(400, "Too many listens. You may not submit more than 1000 listens at once.") }
        var listens: [FakeListenBrainz.Listen] = []
        for item in payload {
            guard let metadata = item["track_metadata"] as? [String: Any],
                  let artist = metadata["artist_name"] as? String, !artist.isEmpty,
                  let track = metadata["track_name"] as? String, !track.isEmpty else {
                return .error(400, "JSON document does not contain required track_metadata.artist_name and track_name.")
            }
            let at: Int64
            if type == "playing_now" {
                if item["listened_at"] != nil { return .error(400, "JSON document must not contain listened_at while submitting playing_now.") }
                at = 0
            } else {
                guard let number = item["listened_at"] as? Int64 else {
                    return .error(400, "JSON document must contain key listened_at as an integer.")
                }
                at = number
            }
            let info = metadata["additional_info"] as? [String: Any] ?? [:]
            listens.append(.init(listenedAt: at, artist: artist, track: track, release: metadata["release_name"] as? String,
                                 recordingMBID: info["recording_mbid"] as? String, releaseMBID: info["release_mbid"] as? String,
                                 artistMBIDs: info["artist_mbids"] as? [String], releaseArtist: info["release_artist_name"] as? String,
                                 releaseGroupMBID: info["release_group_mbid"] as? String))
        }
        await fake.record(type: type, listens: listens, for: user)
        return .json(["status": "ok"])
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

    static func encoded(_ value: some Encodable, status: Int = 200) -> Reply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Reply(status: status, contentType: "application/json", body: (try? encoder.encode(value)) ?? Data())
    }

    static func error(_ status: Int, _ message: String) -> Reply {
        .json(["code": status, "error": message], status: status)
    }
}
