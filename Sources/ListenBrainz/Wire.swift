import Foundation
import VinylogueCore

/// `GET /1/user/{name}/listens`, as ListenBrainz answers it. Required
/// fields are decoded strictly (a wrong type is a malformed answer);
/// MusicBrainz ids in `additional_info` leniently (players send anything).
struct ListensAnswer: Decodable {
    struct Payload: Decodable {
        let count: Int
        let listens: [RawListen]
        let latest_listen_ts: Int64?
        let oldest_listen_ts: Int64?
        let user_id: String?
    }
    let payload: Payload
}

struct RawListen: Decodable {
    struct Metadata: Decodable {
        let artist_name: String
        let track_name: String
        let release_name: String?
        let additional_info: Info?

        enum CodingKeys: String, CodingKey { case artist_name, track_name, release_name, additional_info }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            artist_name = try c.decode(String.self, forKey: .artist_name)
            track_name = try c.decode(String.self, forKey: .track_name)
            release_name = try? c.decodeIfPresent(String.self, forKey: .release_name)
            additional_info = try? c.decodeIfPresent(Info.self, forKey: .additional_info)
        }
    }

    struct Info: Decodable {
        let artist_mbids: [String]?
        let release_mbid: String?
        let recording_mbid: String?
        /// The album's artist (Spotify's listens name it).
        let release_artist_name: String?
        let release_group_mbid: String?

        enum CodingKeys: String, CodingKey { case artist_mbids, release_mbid, recording_mbid, release_artist_name, release_group_mbid }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            artist_mbids = try? c.decodeIfPresent([String].self, forKey: .artist_mbids)
            release_mbid = try? c.decodeIfPresent(String.self, forKey: .release_mbid)
            recording_mbid = try? c.decodeIfPresent(String.self, forKey: .recording_mbid)
            release_artist_name = try? c.decodeIfPresent(String.self, forKey: .release_artist_name)
            release_group_mbid = try? c.decodeIfPresent(String.self, forKey: .release_group_mbid)
        }
    }

    let listened_at: Int64
    let track_metadata: Metadata

    /// The listen as a scrobble; nil without an artist or a track name.
    var scrobble: Scrobble? {
        let m = track_metadata
        guard !m.artist_name.isEmpty, !m.track_name.isEmpty else { return nil }
        return Scrobble(instant: listened_at, artist: m.artist_name, album: m.release_name ?? "", track: m.track_name,
                        artistMBID: m.additional_info?.artist_mbids?.first, albumMBID: m.additional_info?.release_mbid,
                        trackMBID: m.additional_info?.recording_mbid, albumArtist: m.additional_info?.release_artist_name,
                        releaseGroupMBID: m.additional_info?.release_group_mbid)
    }
}

/// ListenBrainz's error body: `{"code": 400, "error": "…"}`.
struct ErrorAnswer: Decodable {
    let error: String
}

/// `POST /1/submit-listens`'s body.
struct Submission: Encodable {
    struct Listen: Encodable {
        /// None for `playing_now`, which must not carry one.
        let listened_at: Int64?
        let track_metadata: Metadata
    }
    struct Metadata: Encodable {
        let artist_name: String
        let track_name: String
        let release_name: String?
        let additional_info: Info
    }
    struct Info: Encodable {
        let artist_mbids: [String]?
        let release_mbid: String?
        let recording_mbid: String?
        let release_artist_name: String?
        let release_group_mbid: String?
        let duration_ms: Int64?
        let submission_client: String
    }
    let listen_type: String
    let payload: [Listen]

    init(_ scrobbles: [Scrobble]) {
        listen_type = scrobbles.count == 1 ? "single" : "import"
        payload = scrobbles.map { s in Listen(listened_at: s.instant, track_metadata: Self.metadata(s, duration: nil)) }
    }

    /// A `playing_now` of `scrobble` (its instant is not sent).
    init(playingNow scrobble: Scrobble, duration: Int64?) {
        listen_type = "playing_now"
        payload = [Listen(listened_at: nil, track_metadata: Self.metadata(scrobble, duration: duration))]
    }

    static func metadata(_ s: Scrobble, duration: Int64?) -> Metadata {
        Metadata(artist_name: s.artist, track_name: s.track, release_name: s.album.isEmpty ? nil : s.album,
                 additional_info: Info(artist_mbids: s.artistMBID.map { [$0] }, release_mbid: s.albumMBID,
                                       recording_mbid: s.trackMBID, release_artist_name: s.albumArtist,
                                       release_group_mbid: s.releaseGroupMBID, duration_ms: duration.map { $0 * 1000 }, submission_client: "Vinylogue"))
    }
}

/// `GET /1/validate-token`'s answer.
struct TokenAnswer: Decodable {
    let valid: Bool
    let user_name: String?
}
