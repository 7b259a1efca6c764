import Foundation

/// ListenBrainz's playlists API in the fake, as `playlist_api.py`
/// validates and answers it: `POST /1/playlist/create` (JSPF with a title,
/// `public` as a boolean in the playlist extension, tracks whose
/// `identifier` is a string: the recording prefix and a UUID),
/// `GET /1/user/{name}/playlists` (private ones only with the user's own
/// token), `POST /1/playlist/{mbid}/delete` (the creator's only), and
/// `GET /1/playlist/{mbid}` (its tracks, each identifier a list, as
/// ListenBrainz writes them).
extension FakeListenBrainz {
    /// A playlist kept by the fake.
    public struct StoredPlaylist: Sendable, Hashable, Codable {
        public let mbid: String
        public let creator: String
        public let title: String
        public let annotation: String?
        public let isPublic: Bool
        /// Recording ids, in order.
        public let recordings: [String]
    }

    static let recordingPrefix = "https://musicbrainz.org/recording/"
    static let playlistPrefix = "https://listenbrainz.org/playlist/"
    static let playlistExtension = "https://musicbrainz.org/doc/jspf#playlist"

    static func createPlaylistReply(_ fake: FakeListenBrainz, token: String?, body: Data) async -> Reply {
        guard let token else { return .error(401, "You need to provide an Authorization header.") }
        guard let user = await fake.user(ofToken: token) else { return .error(401, "Invalid authorization token.") }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return .error(400, "Poorly formatted JSON.") }
        guard let playlist = object["playlist"] as? [String: Any] else { return .error(400, "JSPF playlist requires 'playlist' element") }
        guard let title = playlist["title"] as? String, !title.isEmpty else {
            return .error(400, "JSPF playlist must contain a title element with the title of the playlist.")
        }
        guard let extensions = playlist["extension"] as? [String: Any], let own = extensions[playlistExtension] as? [String: Any],
              own["public"] != nil else {
            return .error(400, "JSPF playlist.extension.https://musicbrainz.org/doc/jspf#playlist.public field must be given.")
        }
        // A JSON boolean, not "true" nor 1: read strictly.
        struct Flag: Decodable { let `public`: Bool }
        struct Own: Decodable {
            let own: Flag
            enum CodingKeys: String, CodingKey { case own = "https://musicbrainz.org/doc/jspf#playlist" }
        }
        struct Body: Decodable { struct Playlist: Decodable { let `extension`: Own }; let playlist: Playlist }
        guard let isPublic = (try? JSONDecoder().decode(Body.self, from: body))?.playlist.extension.own.public else {
            return .error(400, "JSPF playlist public field must contain a boolean.")
        }
        var recordings: [String] = []
        for (index, track) in ((playlist["track"] as? [[String: Any]]) ?? []).enumerated() {
            guard let identifier = track["identifier"] else {
                return .error(400, "JSPF playlist track \(index) must contain an identifier element with a recording MBID.")
            }
            // ListenBrainz's validator takes a string only (a list fails it).
            guard let text = identifier as? String else { return .error(500, "An unknown error occured.") }
            guard text.hasPrefix(recordingPrefix) else {
                return .error(400, "JSPF playlist track \(index) identifier must have the namespace '\(recordingPrefix)' prepended to it.")
            }
            guard let uuid = UUID(uuidString: String(text.dropFirst(recordingPrefix.count))) else {
                return .error(400, "JSPF playlist track \(index) does not contain a valid track identifier field.")
            }
            recordings.append(uuid.uuidString.lowercased())
        }
        let stored = StoredPlaylist(mbid: UUID().uuidString.lowercased(), creator: user, title: title,
                                    annotation: playlist["annotation"] as? String, isPublic: isPublic, recordings: recordings)
        await fake.keep(stored)
        return .json(["status": "ok", "playlist_mbid": stored.mbid])
    }

    static func userPlaylistsReply(_ fake: FakeListenBrainz, user: String, token: String?, query: [String: String]) async -> Reply {
        guard let count = Int(query["count"] ?? "25"), count >= 0, let offset = Int(query["offset"] ?? "0"), offset >= 0 else {
            return .error(400, "Invalid parameters.")
        }
        guard await fake.hasUser(user) else { return .error(404, "Cannot find user: \(user)") }
        let asker = await token.asyncMap { await fake.user(ofToken: $0) } ?? nil
        let all = await fake.playlists().filter { $0.creator.lowercased() == user.lowercased() && ($0.isPublic || asker?.lowercased() == user.lowercased()) }
        let page = all.dropFirst(offset).prefix(count)
        return .json(["playlists": page.map { p in
            ["playlist": ["title": p.title, "identifier": playlistPrefix + p.mbid, "creator": p.creator, "track": [Any](),
                          "extension": [playlistExtension: ["public": p.isPublic, "creator": p.creator]]] as [String: Any]]
        }, "playlist_count": all.count, "offset": offset, "count": count])
    }

    static func deletePlaylistReply(_ fake: FakeListenBrainz, token: String?, mbid: String) async -> Reply {
        guard let token, let user = await fake.user(ofToken: token) else { return .error(401, "Invalid authorization token.") }
        guard UUID(uuidString: mbid) != nil else { return .error(400, "Provided playlist ID is invalid.") }
        guard let playlist = await fake.playlists().first(where: { $0.mbid == mbid.lowercased() }) else { return .error(404, "Cannot find playlist: \(mbid)") }
        guard playlist.creator.lowercased() == user.lowercased() else { return .error(403, "You are not allowed to delete this playlist.") }
        await fake.removePlaylist(mbid.lowercased())
        return .json(["status": "ok"])
    }

    static func playlistReply(_ fake: FakeListenBrainz, mbid: String) async -> Reply {
        guard let p = await fake.playlists().first(where: { $0.mbid == mbid.lowercased() }) else { return .error(404, "Cannot find playlist: \(mbid)") }
        return .json(["playlist": ["title": p.title, "identifier": playlistPrefix + p.mbid, "creator": p.creator,
                                   "annotation": p.annotation ?? "",
                                   "track": p.recordings.map { ["identifier": [recordingPrefix + $0]] },
                                   "extension": [playlistExtension: ["public": p.isPublic, "creator": p.creator]]] as [String: Any]])
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async -> T) async -> T? {
        guard let self else { return nil }
        return await transform(self)
    }
}
