import Foundation
import VinylogueCore
import HTTPServing
import Hummingbird
import NIOCore

/// Answers of the Last.fm-compatible API in Last.fm's two shapes: XML
/// (`<lfm status="ok">…</lfm>`, the default) and JSON (`format=json`),
/// with Last.fm's error codes and its quirks (a single scrobble is an
/// object, several are a list; names carry `corrected` and `#text`).
package struct LastFMAnswer: Sendable {
    package enum Format: Sendable { case xml, json }

    /// Last.fm's error codes, as its API documentation lists them.
    package enum ErrorCode: Int, Sendable {
        case invalidMethod = 3
        case authenticationFailed = 4
        case invalidParameters = 6
        case invalidAPIKey = 10
        case invalidSessionKey = 9
        case serviceOffline = 11
        case temporary = 16
        case loginRequired = 17
        case rateLimitExceeded = 29

        /// Last.fm's own words, before our sentence.
        package var title: String {
            switch self {
            case .invalidMethod: "Invalid Method - No method with that name in this package"
            case .authenticationFailed: "Authentication Failed - You do not have permissions to access the service"
            case .invalidParameters: "Invalid parameters - Your request is missing a required parameter"
            case .invalidAPIKey: "Invalid API key - You must be granted a valid key by last.fm"
            case .invalidSessionKey: "Invalid session key - Please re-authenticate"
            case .serviceOffline: "Service Offline - This service is temporarily offline. Try again later."
            case .temporary: "There was a temporary error processing your request. Please try again"
            case .loginRequired: "Login: User requires to be logged in"
            case .rateLimitExceeded: "Rate Limit Exceeded - Your IP has made too many requests in a short period"
            }
        }

        package var status: HTTPResponse.Status {
            switch self {
            case .invalidMethod, .invalidParameters: .badRequest
            case .authenticationFailed, .invalidSessionKey, .invalidAPIKey: .forbidden
            case .loginRequired: .unauthorized
            case .serviceOffline, .temporary: .serviceUnavailable
            case .rateLimitExceeded: .tooManyRequests
            }
        }
    }

    package let format: Format

    package func error(_ code: ErrorCode, _ sentence: String) -> Response {
        let message = "\(code.title): \(sentence)"
        switch format {
        case .xml:
            return Self.xml(#"<lfm status="failed"><error code="\#(code.rawValue)">\#(Self.escaped(message))</error></lfm>"#, status: code.status)
        case .json:
            return Self.json(["error": code.rawValue, "message": message], status: code.status)
        }
    }

    /// A read method on a site kept private with a password (error 17,
    /// HTTP 401 with the pages' Basic challenge).
    package func privateSite() -> Response {
        var response = error(.loginRequired, "This Vinylogue is private: send its password with HTTP Basic authentication (any user name), "
                             + "or the session key (sk) auth.getMobileSession gave your player.")
        response.headers[.wwwAuthenticate] = SitePassword.challenge
        return response
    }

    /// Too many wrong site passwords from the caller's address: error 29,
    /// HTTP 429, and when to try again.
    package func slowed(_ seconds: Int) -> Response {
        var response = error(.rateLimitExceeded, SitePassword.slowedSentence(seconds))
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    /// Last.fm's "not found" (error 6, HTTP 404) in its own words alone:
    /// "User not found", "Album not found".
    package func notFound(_ message: String) -> Response {
        switch format {
        case .xml: Self.xml(#"<lfm status="failed"><error code="6">\#(Self.escaped(message))</error></lfm>"#, status: .notFound)
        case .json: Self.json(["error": 6, "message": message], status: .notFound)
        }
    }

    /// A read method's answer: `root` inside `<lfm status="ok">`, or as
    /// the one key of a JSON object.
    package func ok(_ root: LastFMNode) -> Response {
        switch format {
        case .xml: Self.xml("<lfm status=\"ok\">" + root.xml + "</lfm>")
        case .json: Self.json([root.name: root.json])
        }
    }

    /// `auth.getMobileSession`'s answer.
    package func session(name: String, key: String) -> Response {
        switch format {
        case .xml:
            return Self.xml("<lfm status=\"ok\"><session><name>\(Self.escaped(name))</name><key>\(key)</key><subscriber>0</subscriber></session></lfm>")
        case .json:
            return Self.json(["session": ["name": name, "key": key, "subscriber": 0]])
        }
    }

    /// `track.scrobble`'s answer: each scrobble echoed with its
    /// `ignoredMessage`, and the counts.
    package func scrobbles(_ batch: LastFMScrobbleBatch) -> Response {
        let ignored = batch.items.count { (try? $0.outcome.get()) == nil }
        let accepted = batch.items.count - ignored
        switch format {
        case .xml:
            let rows = batch.items.map { item in
                "<scrobble>" + Self.xmlNames(artist: item.artist, track: item.track, album: item.album, albumArtist: item.albumArtist)
                    + "<timestamp>\(item.timestamp)</timestamp>" + Self.xmlIgnored(item.outcome) + "</scrobble>"
            }.joined()
            return Self.xml("<lfm status=\"ok\"><scrobbles accepted=\"\(accepted)\" ignored=\"\(ignored)\">\(rows)</scrobbles></lfm>")
        case .json:
            let rows: [[String: Any]] = batch.items.map { item in
                var row = Self.jsonNames(artist: item.artist, track: item.track, album: item.album, albumArtist: item.albumArtist)
                row["timestamp"] = String(item.timestamp)
                row["ignoredMessage"] = Self.jsonIgnored(item.outcome)
                return row
            }
            // Last.fm's quirk, which clients expect: one scrobble is an object.
            let list: Any = rows.count == 1 ? rows[0] : rows
            return Self.json(["scrobbles": ["scrobble": list, "@attr": ["accepted": accepted, "ignored": ignored]]])
        }
    }

    /// `track.updateNowPlaying`'s answer.
    package func nowPlaying(artist: String, track: String, album: String, albumArtist: String,
                    outcome: Result<Void, LastFMScrobbleBatch.IgnoredScrobble>) -> Response {
        let result: Result<Int, LastFMScrobbleBatch.IgnoredScrobble> = outcome.map { 0 }
        switch format {
        case .xml:
            return Self.xml("<lfm status=\"ok\"><nowplaying>" + Self.xmlNames(artist: artist, track: track, album: album, albumArtist: albumArtist)
                            + Self.xmlIgnored(result) + "</nowplaying></lfm>")
        case .json:
            var row = Self.jsonNames(artist: artist, track: track, album: album, albumArtist: albumArtist)
            row["ignoredMessage"] = Self.jsonIgnored(result)
            return Self.json(["nowplaying": row])
        }
    }

    private static func xmlNames(artist: String, track: String, album: String, albumArtist: String) -> String {
        [("track", track), ("artist", artist), ("album", album), ("albumArtist", albumArtist)]
            .map { "<\($0.0) corrected=\"0\">\(escaped($0.1))</\($0.0)>" }.joined()
    }

    private static func xmlIgnored<T>(_ outcome: Result<T, LastFMScrobbleBatch.IgnoredScrobble>) -> String {
        switch outcome {
        case .success: #"<ignoredMessage code="0"></ignoredMessage>"#
        case .failure(let ignored): "<ignoredMessage code=\"\(ignored.code.rawValue)\">\(escaped(ignored.message))</ignoredMessage>"
        }
    }

    private static func jsonNames(artist: String, track: String, album: String, albumArtist: String) -> [String: Any] {
        ["track": ["corrected": "0", "#text": track], "artist": ["corrected": "0", "#text": artist],
         "album": ["corrected": "0", "#text": album], "albumArtist": ["corrected": "0", "#text": albumArtist]]
    }

    private static func jsonIgnored<T>(_ outcome: Result<T, LastFMScrobbleBatch.IgnoredScrobble>) -> [String: String] {
        switch outcome {
        case .success: ["code": "0", "#text": ""]
        case .failure(let ignored): ["code": String(ignored.code.rawValue), "#text": ignored.message]
        }
    }

    /// Text made safe inside an element or an attribute.
    package static func escaped(_ text: String) -> String { XMLText.escaped(text) }

    private static func xml(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/xml; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + body + "\n")))
    }

    private static func json(_ value: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data(#"{"error":16,"message":"The answer could not be written."}"#.utf8)
        var response = WholeAnswer.json(data, status: status)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
