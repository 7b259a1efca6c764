import Foundation
import VinylogueCore

/// `track.scrobble` as Last.fm plays it: a POST signed with the shared
/// secret and authorised by a session key (error 13 for a bad signature, 9
/// for an unknown session key), up to 50 scrobbles as `artist[i]`,
/// `track[i]`, `timestamp[i]`…, each accepted or ignored with a code (3:
/// older than 14 days, 4: more than a day ahead). Accepted scrobbles join
/// the account's recent tracks, and every arrival is counted, repeats
/// included (`scrobbles()`), so a test can see one sent twice.
extension FakeLastFM {
    /// A session key for `user`, as signing in would give.
    public func session(for user: String) -> String {
        let name = account(user)?.name ?? user
        let key = Self.randomHex()
        sessionKeys[name] = key
        return key
    }

    /// Every scrobble received, by account name, in order of arrival.
    public func scrobbles() -> [String: [Scrobble]] { scrobblesReceived }

    /// Returns once `user` has received at least `count` scrobbles.
    public func untilScrobbled(_ count: Int, by user: String) async {
        let name = account(user)?.name ?? user
        guard scrobblesReceived[name, default: []].count < count else { return }
        await withCheckedContinuation { scrobbleWaiters.append((name, count, $0)) }
    }

    private func scrobbled() {
        let ready = scrobbleWaiters.filter { scrobblesReceived[$0.name, default: []].count >= $0.count }
        scrobbleWaiters.removeAll { scrobblesReceived[$0.name, default: []].count >= $0.count }
        ready.forEach { $0.waiter.resume() }
    }

    /// The account a signed call with a session key is made for, or Last.fm's refusal.
    private enum Signed {
        case account(String)
        case refused(FakeReply)
    }

    private func signedAccount(_ p: [String: String]) -> Signed {
        var signed = p
        signed["api_sig"] = nil
        guard let signature = p["api_sig"], signature == Self.signature(signed, secret: apiSecret) else {
            return .refused(.error(13, "Invalid method signature supplied", status: 403))
        }
        guard let key = p["sk"], let name = sessionKeys.first(where: { $0.value == key })?.key else {
            return .refused(.error(9, "Invalid session key - Please re-authenticate", status: 403))
        }
        return .account(name)
    }

    /// What each account was last said to be playing now, by account name.
    public func nowPlaying() -> [String: Scrobble] { nowPlayingReceived }

    /// Returns once `user` is said to be playing `track` now.
    public func untilPlayingNow(_ track: String, by user: String) async {
        let name = account(user)?.name ?? user
        guard nowPlayingReceived[name]?.track != track else { return }
        await withCheckedContinuation { nowPlayingWaiters.append((name, track, $0)) }
    }

    /// `track.updateNowPlaying`: remembered (not scrobbled), answered as Last.fm does.
    func updateNowPlaying(_ p: [String: String]) -> FakeReply {
        let name: String
        switch signedAccount(p) {
        case .account(let account): name = account
        case .refused(let refusal): return refusal
        }
        guard let artist = p["artist"], let track = p["track"] else {
            return .error(6, "Invalid parameters - Your request is missing a required parameter")
        }
        nowPlayingReceived[name] = Scrobble(instant: Int64(clock.now.timeIntervalSince1970), artist: artist, album: p["album"] ?? "", track: track)
        let ready = nowPlayingWaiters.filter { $0.name == name && $0.track == track }
        nowPlayingWaiters.removeAll { $0.name == name && $0.track == track }
        ready.forEach { $0.waiter.resume() }
        return .json(Wire.NowPlayingAnswer(artist: artist, track: track))
    }

    func scrobble(_ p: [String: String]) -> FakeReply {
        let name: String
        switch signedAccount(p) {
        case .account(let account): name = account
        case .refused(let refusal): return refusal
        }
        var items: [Wire.ScrobbleAnswer.Item] = []
        var accepted = 0
        let now = Int64(clock.now.timeIntervalSince1970)
        for index in 0..<Self.scrobbleBatchLimit {
            guard let artist = p["artist[\(index)]"], let track = p["track[\(index)]"],
                  let time = p["timestamp[\(index)]"].flatMap(Int64.init) else { break }
            let scrobble = Scrobble(instant: time, artist: artist, album: p["album[\(index)]"] ?? "", track: track,
                                    trackMBID: p["mbid[\(index)]"], albumArtist: p["albumArtist[\(index)]"])
            var code = 0
            if time < now - 14 * 86_400 { code = 3 } else if time > now + 86_400 { code = 4 }
            if code == 0 {
                accepted += 1
                scrobblesReceived[name, default: []].append(scrobble)
                scrobbleLate(scrobble, for: name)
            }
            items.append(.init(artist: artist, track: track, timestamp: String(time), code: code))
        }
        guard !items.isEmpty else { return .error(6, "Invalid parameters - Your request is missing a required parameter") }
        scrobbled()
        return .json(Wire.ScrobbleAnswer(items: items, accepted: accepted))
    }

    static let scrobbleBatchLimit = 50
}

extension Wire {
    /// `{"scrobbles": {"scrobble": [...], "@attr": {"accepted": n, "ignored": n}}}`.
    struct ScrobbleAnswer: Encodable {
        struct Item: Encodable {
            let artist: String
            let track: String
            let timestamp: String
            let code: Int
        }
        let items: [Item]
        let accepted: Int

        func encode(to encoder: any Encoder) throws {
            struct Text: Encodable {
                let text: String
                let corrected = "0"
                enum CodingKeys: String, CodingKey { case text = "#text", corrected }
            }
            struct Ignored: Encodable {
                let code: String
                let text: String
                enum CodingKeys: String, CodingKey { case code, text = "#text" }
            }
            struct Row: Encodable {
                let artist: Text
                let track: Text
                let timestamp: String
                let ignoredMessage: Ignored
            }
            struct Attributes: Encodable { let accepted: Int; let ignored: Int }
            struct Body: Encodable {
                let scrobble: [Row]
                let attr: Attributes
                enum CodingKeys: String, CodingKey { case scrobble, attr = "@attr" }
            }
            struct Top: Encodable { let scrobbles: Body }
            let rows = items.map {
                Row(artist: Text(text: $0.artist), track: Text(text: $0.track), timestamp: $0.timestamp,
                    ignoredMessage: Ignored(code: String($0.code), text: $0.code == 0 ? "" : "Timestamp failed filter"))
            }
            try Top(scrobbles: Body(scrobble: rows, attr: Attributes(accepted: accepted, ignored: items.count - accepted))).encode(to: encoder)
        }
    }
}

extension Wire {
    /// `{"nowplaying": {"artist": {"#text": …}, "track": {"#text": …}, "ignoredMessage": {"code": "0"}}}`.
    struct NowPlayingAnswer: Encodable {
        let artist: String
        let track: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            var nowPlaying = container.nestedContainer(keyedBy: Key.self, forKey: Key("nowplaying"))
            var artistText = nowPlaying.nestedContainer(keyedBy: Key.self, forKey: Key("artist"))
            try artistText.encode(artist, forKey: Key("#text"))
            var trackText = nowPlaying.nestedContainer(keyedBy: Key.self, forKey: Key("track"))
            try trackText.encode(track, forKey: Key("#text"))
            var ignored = nowPlaying.nestedContainer(keyedBy: Key.self, forKey: Key("ignoredMessage"))
            try ignored.encode("0", forKey: Key("code"))
        }

        struct Key: CodingKey {
            let stringValue: String
            init(_ value: String) { stringValue = value }
            init?(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
    }
}
