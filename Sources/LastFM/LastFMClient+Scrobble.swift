import Foundation
import VinylogueCore

/// What Last.fm said of a `track.scrobble` batch: which it took, and why it
/// ignored the others (by their place in the batch).
public struct ScrobbleReceipt: Sendable, Hashable {
    public let accepted: Int
    /// Index in the batch → Last.fm's reason, for each scrobble it ignored.
    public let ignored: [Int: String]

    public init(accepted: Int, ignored: [Int: String]) {
        self.accepted = accepted
        self.ignored = ignored
    }
}

extension LastFMClient {
    /// Last.fm's most scrobbles in one `track.scrobble`.
    public static let scrobbleBatchLimit = 50

    /// Scrobbles `batch` (at most 50; each a scrobble and its length in
    /// seconds when known) for the account whose session key is
    /// `sessionKey`: one signed POST, in the shared rate limit, never
    /// retried, joined or cached (the caller decides what a failure means).
    public func scrobble(_ batch: [(scrobble: Scrobble, duration: Int64?)], sessionKey: String) async throws(SourceError) -> ScrobbleReceipt {
        precondition(batch.count <= Self.scrobbleBatchLimit, "Last.fm takes at most \(Self.scrobbleBatchLimit) scrobbles at a time")
        var parameters = ["sk": sessionKey]
        for (index, item) in batch.enumerated() {
            let s = item.scrobble
            parameters["artist[\(index)]"] = s.artist
            parameters["track[\(index)]"] = s.track
            parameters["timestamp[\(index)]"] = String(s.instant)
            if !s.album.isEmpty { parameters["album[\(index)]"] = s.album }
            if let albumArtist = s.albumArtist { parameters["albumArtist[\(index)]"] = albumArtist }
            if let mbid = s.trackMBID { parameters["mbid[\(index)]"] = mbid }
            if let seconds = item.duration { parameters["duration[\(index)]"] = String(seconds) }
            // Sent by this server, not chosen by the person at the player.
            parameters["chosenByUser[\(index)]"] = "0"
        }
        let (request, body) = try await signedPost("track.scrobble", parameters)
        let raw = try decodeBody(ScrobbleResponse.self, body, request)
        var ignored: [Int: String] = [:]
        for (index, item) in (raw.scrobbles.scrobble?.items ?? []).enumerated() {
            if let message = item.ignoredMessage, message.code.value != 0 {
                ignored[index] = Self.ignoredReason(code: message.code.value, text: message.text?.value ?? "")
            }
        }
        let accepted = raw.scrobbles.attr?.accepted?.value ?? (batch.count - ignored.count)
        return ScrobbleReceipt(accepted: accepted, ignored: ignored)
    }

    /// Tells Last.fm the account whose session key is `sessionKey` is
    /// playing `scrobble` now (`track.updateNowPlaying`, with its length in
    /// seconds when known): one signed POST in the shared rate limit,
    /// never retried.
    public func updateNowPlaying(_ scrobble: Scrobble, duration: Int64?, sessionKey: String) async throws(SourceError) {
        var parameters = ["sk": sessionKey, "artist": scrobble.artist, "track": scrobble.track]
        if !scrobble.album.isEmpty { parameters["album"] = scrobble.album }
        if let albumArtist = scrobble.albumArtist { parameters["albumArtist"] = albumArtist }
        if let mbid = scrobble.trackMBID { parameters["mbid"] = mbid }
        if let duration { parameters["duration"] = String(duration) }
        let (request, body) = try await signedPost("track.updateNowPlaying", parameters)
        _ = try decodeBody(NowPlayingResponse.self, body, request)
    }

    /// One signed POST of `method` with a session key among `parameters`,
    /// in the shared rate limit, never retried; the request and the body
    /// of Last.fm's answer.
    private func signedPost(_ method: String, _ parameters: [String: String]) async throws(SourceError) -> (LastFMRequest, Data) {
        guard let key = configuration.apiKey, let secret = configuration.apiSecret else { throw .missingAPIKey }
        var request = LastFMRequest(method: method, parameters: parameters, subject: .signIn, policy: .never)
        request.signed = true
        do {
            return (request, try await fetchOnce(request, url: configuration.baseURL, form: request.form(apiKey: key, secret: secret)))
        } catch let error as SourceError {
            throw error
        } catch {
            throw .transport(detail: networkFailure(error))
        }
    }

    /// Last.fm's `ignoredMessage` codes, as a sentence fragment.
    static func ignoredReason(code: Int, text: String) -> String {
        switch code {
        case 1: "Last.fm ignored the artist"
        case 2: "Last.fm ignored the track"
        case 3: "Last.fm takes no scrobbles this old"
        case 4: "Last.fm takes no scrobbles from the future"
        case 5: "Last.fm's daily scrobble limit was reached"
        default: text.isEmpty ? "Last.fm ignored it (code \(code))" : "Last.fm ignored it (“\(text)”)"
        }
    }
}

/// `track.scrobble`'s answer: `{"scrobbles": {"scrobble": [...] or {...},
/// "@attr": {"accepted": n, "ignored": n}}}`.
struct ScrobbleResponse: Decodable {
    struct Scrobbles: Decodable {
        struct Attributes: Decodable {
            let accepted: LenientInt?
            let ignored: LenientInt?
        }
        struct Item: Decodable, Sendable {
            struct Ignored: Decodable, Sendable {
                let code: LenientInt
                let text: LenientString?
                enum CodingKeys: String, CodingKey { case code, text = "#text" }
            }
            let ignoredMessage: Ignored?
        }
        let scrobble: OneOrMany<Item>?
        let attr: Attributes?
        enum CodingKeys: String, CodingKey { case scrobble, attr = "@attr" }
    }
    let scrobbles: Scrobbles
}

/// `track.updateNowPlaying`'s answer: `{"nowplaying": {…}}` (what Last.fm
/// made of the track; only its presence is read).
struct NowPlayingResponse: Decodable {
    struct Track: Decodable {}
    let nowplaying: Track
}
