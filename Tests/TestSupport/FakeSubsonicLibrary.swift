import Crypto
import Foundation
import MusicServers
import Synchronization

/// A Subsonic-API library in this process, answering the forms the client
/// sends as the API documents them: token-and-salt sign-in (or, as
/// Supysonic, the password only), `search3` by a name's substring,
/// `getAlbum`, `getPlaylists`, `createPlaylist`.
public final class FakeSubsonicLibrary: Sendable {
    public struct Song: Sendable {
        public let id, title, artist, album: String
        public let track: Int

        public init(id: String, title: String, artist: String, album: String, track: Int) {
            (self.id, self.title, self.artist, self.album, self.track) = (id, title, artist, album, track)
        }
    }

    public struct Album: Sendable {
        public let id, name, artist: String
        public let songs: [Song]

        public init(id: String, name: String, artist: String, songs: [Song]) {
            (self.id, self.name, self.artist, self.songs) = (id, name, artist, songs)
        }
    }

    public let albums: [Album]
    public let password: String
    public let takesTokens: Bool
    /// Every form received, and the playlists made (name → song ids).
    public let forms = Mutex<[String]>([])
    public let playlists = Mutex<[(id: String, name: String, songs: [String])]>([])

    public init(albums: [Album], password: String = "s3cret pass", takesTokens: Bool = true) {
        self.albums = albums
        self.password = password
        self.takesTokens = takesTokens
    }

    public static func ok(_ body: String = "") -> SubsonicTransport.Answer {
        SubsonicTransport.Answer(status: 200, body: Data("{\"subsonic-response\":{\"status\":\"ok\",\"version\":\"1.16.1\"\(body)}}".utf8))
    }

    public static func failed(_ code: Int, _ message: String) -> SubsonicTransport.Answer {
        SubsonicTransport.Answer(status: 200, body: Data("""
            {"subsonic-response":{"status":"failed","version":"1.16.1","error":{"code":\(code),"message":"\(message)"}}}
            """.utf8))
    }

    static func json(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value), as: UTF8.self)
    }

    public func answer(_ url: URL, _ form: String) -> SubsonicTransport.Answer {
        forms.withLock { $0.append(form) }
        var fields: [(String, String)] = []
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            fields.append((parts[0], parts.count > 1 ? parts[1] : ""))
        }
        func value(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }
        // Sign-in.
        if let token = value("t"), let salt = value("s") {
            guard takesTokens else { return Self.failed(41, "Token authentication not supported") }
            let expected = Insecure.MD5.hash(data: Data((password + salt).utf8)).map { String(format: "%02x", $0) }.joined()
            guard token == expected else { return Self.failed(40, "Wrong username or password.") }
        } else if let p = value("p") {
            let hex = p.hasPrefix("enc:") ? String(p.dropFirst(4)) : ""
            var bytes: [UInt8] = []
            var i = hex.startIndex
            while i < hex.endIndex, let next = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) {
                bytes.append(UInt8(hex[i..<next], radix: 16) ?? 0)
                i = next
            }
            guard String(decoding: bytes, as: UTF8.self) == password else { return Self.failed(40, "Wrong username or password.") }
        } else {
            return Self.failed(10, "Missing parameter p")
        }
        switch url.lastPathComponent {
        case "ping.view": return Self.ok()
        case "search3.view":
            let query = (value("query") ?? "").lowercased()
            let found = albums.filter { $0.name.lowercased().contains(query) }.map { ["id": $0.id, "name": $0.name, "artist": $0.artist] }
            return Self.ok(",\"searchResult3\":" + Self.json(["album": found]))
        case "getAlbum.view":
            guard let album = albums.first(where: { $0.id == value("id") }) else { return Self.failed(70, "Album not found") }
            // Songs as a server may give them: out of order, one id a number.
            let songs = album.songs.reversed().map { song -> [String: Any] in
                ["id": Int(song.id) ?? song.id as Any, "title": song.title, "artist": song.artist, "album": song.album, "track": song.track]
            }
            return Self.ok(",\"album\":" + Self.json(["id": album.id, "name": album.name, "song": songs]))
        case "getPlaylists.view":
            let lists = playlists.withLock { $0.map { ["id": $0.id, "name": $0.name] } }
            return Self.ok(",\"playlists\":" + Self.json(["playlist": lists]))
        case "createPlaylist.view":
            let songs = fields.filter { $0.0 == "songId" }.map(\.1)
            playlists.withLock { lists in
                if let id = value("playlistId"), let index = lists.firstIndex(where: { $0.id == id }) {
                    lists[index].songs = songs
                } else {
                    lists.append(("pl\(lists.count + 1)", value("name") ?? "", songs))
                }
            }
            return Self.ok()
        default:
            return Self.failed(0, "Unknown method")
        }
    }

    public var transport: SubsonicTransport {
        SubsonicTransport { url, form, _ in self.answer(url, form) }
    }
}

