import Foundation
import VinylogueCore

/// ListenBrainz's playlists API, as far as a week's playlist needs it:
/// a user's own playlists listed, one deleted, one created from JSPF
/// (tracks by MusicBrainz recording id only: ListenBrainz's playlists
/// hold recordings).
extension ListenBrainzClient {
    /// A week's playlist as saved on ListenBrainz.
    public struct SavedPlaylist: Sendable, Hashable {
        public let mbid: String
        public let user: String
        /// Tracks saved, and tracks left out for want of a recording id.
        public let tracks: Int
        public let leftOut: Int
        /// Whether a playlist of that title was there before (it was deleted).
        public let replaced: Bool

        /// Its page on ListenBrainz.
        public var address: String { ListenBrainzClient.playlistPrefix + mbid }
    }

    /// Saves `playlist` on the token's user's ListenBrainz account,
    /// private, replacing their own of the same title (made first, the old
    /// ones deleted after): its tracks that
    /// carry a MusicBrainz recording id, in order (ListenBrainz's
    /// playlists hold recordings). Nil when no track has one (nothing is
    /// saved then).
    public func save(_ playlist: AlbumPlaylist, token: String) async throws(SourceError) -> SavedPlaylist? {
        guard let user = try await validate(token: token) else { throw .listenBrainz(.invalidToken) }
        let recordings = playlist.tracks.compactMap(\.recordingMBID)
        guard !recordings.isEmpty else { return nil }
        let earlier = try await playlists(of: user, token: token).filter { $0.title == playlist.title }
        // The new one first: a refused save leaves the one from before.
        let mbid = try await createPlaylist(title: playlist.title, annotation: playlist.annotation, recordings: recordings, isPublic: false, token: token)
        for old in earlier where old.mbid != mbid { try await deletePlaylist(old.mbid, token: token) }
        return SavedPlaylist(mbid: mbid, user: user, tracks: recordings.count, leftOut: playlist.tracks.count - recordings.count,
                             replaced: !earlier.isEmpty)
    }

    /// A playlist of the user's, as listed.
    public struct Playlist: Sendable, Hashable {
        public let mbid: String
        public let title: String
    }

    /// The prefix of a playlist's identifier, and of a track's.
    static let playlistPrefix = "https://listenbrainz.org/playlist/"
    public static let recordingPrefix = "https://musicbrainz.org/recording/"
    static let playlistExtension = "https://musicbrainz.org/doc/jspf#playlist"

    /// `user`'s playlists (the private ones too, with their own token), 100 a page.
    public func playlists(of user: String, token: String) async throws(SourceError) -> [Playlist] {
        var found: [Playlist] = []
        var offset = 0
        while true {
            let url = "\(configuration.apiRoot)/1/user/\(Self.pathSegment(user))/playlists?count=100&offset=\(offset)"
            let reply = try await read(url, token: token, notFound: .refused(status: 404, reason: "no such ListenBrainz user"))
            guard let page = try? JSONDecoder().decode(PlaylistsAnswer.self, from: reply.body) else {
                throw .listenBrainz(.malformedResponse(detail: "the playlists were not ListenBrainz's JSON"))
            }
            for item in page.playlists {
                let id = item.playlist.identifier
                guard id.hasPrefix(Self.playlistPrefix) else { continue }
                found.append(Playlist(mbid: String(id.dropFirst(Self.playlistPrefix.count)), title: item.playlist.title))
            }
            offset += page.playlists.count
            if page.playlists.isEmpty || offset >= page.playlist_count || offset > 10_000 { return found }
        }
    }

    /// Deletes one of the token's user's playlists.
    public func deletePlaylist(_ mbid: String, token: String) async throws(SourceError) {
        _ = try await write("\(configuration.apiRoot)/1/playlist/\(Self.pathSegment(mbid))/delete", body: Data("{}".utf8), token: token)
    }

    /// Creates a playlist of `recordings` (MusicBrainz recording ids, in
    /// order) for the token's user; returns its id.
    public func createPlaylist(title: String, annotation: String?, recordings: [String], isPublic: Bool, token: String) async throws(SourceError) -> String {
        let body = CreateBody(playlist: .init(title: title, annotation: annotation,
                                              extension: [Self.playlistExtension: .init(public: isPublic)],
                                              track: recordings.map { .init(identifier: Self.recordingPrefix + $0) }))
        let data: Data
        do { data = try JSONEncoder().encode(body) } catch { throw .listenBrainz(.refused(status: 400, reason: "the playlist could not be written")) }
        let reply = try await write("\(configuration.apiRoot)/1/playlist/create", body: data, token: token)
        guard let answer = try? JSONDecoder().decode(CreatedAnswer.self, from: reply.body) else {
            throw .listenBrainz(.malformedResponse(detail: "the new playlist's answer was not ListenBrainz's JSON"))
        }
        return answer.playlist_mbid
    }

    /// A POST, once: 401 a bad token, 429 and 5xx ListenBrainz unavailable
    /// for now, any other 4xx a refusal with its reason.
    private func write(_ url: String, body: Data, token: String) async throws(SourceError) -> Reply {
        let reply: Reply
        do {
            reply = try await exchange(url, method: .post, token: token, body: body)
        } catch {
            throw .listenBrainz(error)
        }
        switch reply.status {
        case 200..<300: return reply
        case 401: throw .listenBrainz(.invalidToken)
        case 429: throw .listenBrainz(.rateLimited(retryAfter: reply.resetIn))
        case 500...: throw .listenBrainz(.unavailable(status: reply.status))
        default: throw .listenBrainz(.refused(status: reply.status, reason: Self.reason(reply.body)))
        }
    }

    struct PlaylistsAnswer: Decodable {
        struct Item: Decodable {
            struct Body: Decodable {
                let title: String
                let identifier: String
            }
            let playlist: Body
        }
        let playlists: [Item]
        let playlist_count: Int
    }

    struct CreatedAnswer: Decodable {
        let playlist_mbid: String
    }

    struct CreateBody: Encodable {
        struct Playlist: Encodable {
            let title: String
            let annotation: String?
            let `extension`: [String: Extension]
            let track: [Track]
        }
        struct Extension: Encodable {
            let `public`: Bool
        }
        /// A track: its recording, as a string (what `create` takes).
        struct Track: Encodable {
            let identifier: String
        }
        let playlist: Playlist
    }
}
