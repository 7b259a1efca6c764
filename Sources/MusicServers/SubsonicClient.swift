import Crypto
import Foundation
import Synchronization

/// The few calls of the Subsonic API that make a playlist: `ping`,
/// `search3`, `getAlbum`, `getPlaylists`, `createPlaylist`. Each is a form
/// POSTed to `rest/<method>.view` under the account's address (never any
/// other path), answered as JSON. It signs in with the API's token and
/// salt (`t`, `s`: the password is never sent); a server that does not
/// take tokens (error 41, or one that asks for `p`, as Supysonic does) is
/// asked again with the password, as its own clients do.
public final class SubsonicClient: MusicLibrary {
    public struct Playlist: Sendable, Hashable {
        public let id: String
        public let name: String
        /// Whose it is, when the server says (others' public ones are listed too).
        public var owner: String? = nil
    }

    public let account: SubsonicAccount
    private let transport: SubsonicTransport
    private let salt: @Sendable () -> String
    /// Whether the server takes tokens (it is asked with the password once it has said no).
    private let signsInWithPassword = Mutex(false)

    /// The API version Vinylogue speaks (tokens came with 1.13.0).
    static let version = "1.16.1"

    public init(account: SubsonicAccount, transport: SubsonicTransport,
                salt: @escaping @Sendable () -> String = { String((0..<12).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }) }) {
        self.account = account
        self.transport = transport
        self.salt = salt
    }

    /// Whether the address and the account work.
    public func ping() async throws(MusicServerError) {
        _ = try await call("ping", [])
    }

    /// Albums whose name holds `query`, as the server searches.
    public func searchAlbums(_ query: String, count: Int = 20) async throws(MusicServerError) -> [LibraryAlbum] {
        let body = try await call("search3", [("query", query), ("albumCount", String(count)), ("artistCount", "0"), ("songCount", "0")])
        return (body.searchResult3?.album?.items ?? []).compactMap { album in
            guard let id = album.id?.text else { return nil }
            return LibraryAlbum(id: id, name: album.name ?? album.title ?? "", artist: album.artist ?? "")
        }
    }

    /// An album's songs, in disc and track order.
    public func songs(ofAlbum id: String) async throws(MusicServerError) -> [LibrarySong] {
        let body = try await call("getAlbum", [("id", id)])
        let songs = (body.album?.song?.items ?? []).compactMap { song -> LibrarySong? in
            guard let id = song.id?.text else { return nil }
            return LibrarySong(id: id, title: song.title ?? "", artist: song.artist ?? "", album: song.album ?? "",
                        disc: song.discNumber?.number ?? 1, track: song.track?.number ?? 0)
        }
        return songs.enumerated().sorted { ($0.element.disc, $0.element.track, $0.offset) < ($1.element.disc, $1.element.track, $1.offset) }
            .map(\.element)
    }

    /// The playlists the account sees.
    public func playlists() async throws(MusicServerError) -> [Playlist] {
        let body = try await call("getPlaylists", [])
        return (body.playlists?.playlist?.items ?? []).compactMap { playlist in
            guard let id = playlist.id?.text else { return nil }
            return Playlist(id: id, name: playlist.name ?? "", owner: playlist.owner)
        }
    }

    /// Makes the playlist `name` hold `songs`, in order: the one `replacing`
    /// names when given (its songs replaced), else a new one.
    public func savePlaylist(name: String, songs: [String], replacing: String?) async throws(MusicServerError) {
        var parameters: [(String, String)] = replacing.map { [("playlistId", $0), ("name", name)] } ?? [("name", name)]
        parameters += songs.map { ("songId", $0) }
        _ = try await call("createPlaylist", parameters)
    }

    // MARK: - As a library

    public var server: String { account.server }

    public func albums(named query: String) async throws(MusicServerError) -> [LibraryAlbum] {
        try await searchAlbums(query, count: 20)
    }

    public func songs(of album: LibraryAlbum) async throws(MusicServerError) -> [LibrarySong] {
        try await songs(ofAlbum: album.id)
    }

    public func savePlaylist(name: String, songs: [LibrarySong]) async throws(MusicServerError) -> Bool {
        // Only the user's own is replaced: another's public playlist of the same name is listed too.
        let existing = try await playlists().first { $0.name == name && ($0.owner == nil || $0.owner == account.username) }
        try await savePlaylist(name: name, songs: songs.map(\.id), replacing: existing?.id)
        return existing != nil
    }

    // MARK: - The wire

    func call(_ method: String, _ parameters: [(String, String)]) async throws(MusicServerError) -> Wire.Body {
        let server = account.server
        let url = account.address.appendingPathComponent("rest").appendingPathComponent("\(method).view")
        let usePassword = signsInWithPassword.withLock { $0 }
        let answer = try await transport.send(url, Self.form(signIn(password: usePassword) + parameters), server)
        // Only an answer in the API's own form may ask for the password
        // (error 41, or Supysonic's 10 for the missing `p`): anything else
        // is no Subsonic server, and is never sent it.
        let body = try Self.decode(answer, server: server)
        if let error = body.error, body.status != "ok" {
            switch error.code?.number {
            case 40: throw .wrongCredentials(server)
            case 41 where !usePassword, 10 where !usePassword:
                return try await callWithPassword(method, parameters, url: url, server: server)
            default: throw .refused(server, reason: Self.sentence(error.message ?? "error \(error.code?.number ?? 0)"))
            }
        }
        return body
    }

    private func callWithPassword(_ method: String, _ parameters: [(String, String)], url: URL, server: String) async throws(MusicServerError) -> Wire.Body {
        let answer = try await transport.send(url, Self.form(signIn(password: true) + parameters), server)
        let body = try Self.decode(answer, server: server)
        if let error = body.error, body.status != "ok" {
            if error.code?.number == 40 { throw .wrongCredentials(server) }
            throw .refused(server, reason: Self.sentence(error.message ?? "error \(error.code?.number ?? 0)"))
        }
        signsInWithPassword.withLock { $0 = true }
        return body
    }

    private func signIn(password: Bool) -> [(String, String)] {
        var fields = [("u", account.username), ("v", Self.version), ("c", "vinylogue"), ("f", "json")]
        if password {
            fields.append(("p", "enc:" + account.password.utf8.map { String(format: "%02x", $0) }.joined()))
        } else {
            let salt = self.salt()
            let token = Insecure.MD5.hash(data: Data((account.password + salt).utf8)).map { String(format: "%02x", $0) }.joined()
            fields += [("t", token), ("s", salt)]
        }
        return fields
    }

    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    static func decode(_ answer: SubsonicTransport.Answer, server: String) throws(MusicServerError) -> Wire.Body {
        if (300..<400).contains(answer.status) { throw .redirected(server) }
        guard let envelope = try? JSONDecoder().decode(Wire.Envelope.self, from: answer.body) else {
            if answer.status == 401 || answer.status == 403 { throw .wrongCredentials(server) }
            throw .notSubsonic(server)
        }
        return envelope.response
    }

    /// A server's own message, made safe to show: one line, not too long,
    /// without control or format characters (a right-to-left override
    /// would turn the sentence around it).
    static func sentence(_ message: String) -> String {
        let visible = String(String.UnicodeScalarView(message.unicodeScalars.filter {
            $0 == "\n" || !($0.properties.generalCategory == .control || $0.properties.generalCategory == .format)
        }))
        let line = visible.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let cut = line.count > 200 ? String(line.prefix(199)) + "…" : line
        return cut.hasSuffix(".") || cut.hasSuffix("…") ? cut : cut + "."
    }
}

/// The Subsonic API's JSON, read leniently: servers differ in whether an id
/// is a string or a number, and whether a list of one is a list.
enum Wire {
    struct Envelope: Decodable {
        let response: Body
        enum CodingKeys: String, CodingKey { case response = "subsonic-response" }
    }

    struct Body: Decodable {
        let status: String
        let error: Failure?
        let searchResult3: SearchResult?
        let album: AlbumWithSongs?
        let playlists: Playlists?
    }

    struct Failure: Decodable {
        let code: Scalar?
        let message: String?
    }

    struct SearchResult: Decodable { let album: OneOrMany<Entry>? }
    struct AlbumWithSongs: Decodable { let song: OneOrMany<Entry>? }
    struct Playlists: Decodable { let playlist: OneOrMany<Entry>? }

    struct Entry: Decodable {
        let id: Scalar?
        let name: String?
        let title: String?
        let artist: String?
        let album: String?
        let track: Scalar?
        let discNumber: Scalar?
        let owner: String?
    }

    /// A string or a number.
    struct Scalar: Decodable {
        let text: String
        var number: Int? { Int(text) }

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let string = try? value.decode(String.self) { text = string } else if let int = try? value.decode(Int.self) { text = String(int) } else {
                text = String(try value.decode(Double.self))
            }
        }
    }

    struct OneOrMany<T: Decodable>: Decodable {
        let items: [T]

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let many = try? value.decode([T].self) { items = many } else { items = [try value.decode(T.self)] }
        }
    }
}
