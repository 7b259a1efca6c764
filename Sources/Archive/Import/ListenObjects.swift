import Foundation
import VinylogueCore

/// Turns one decoded JSON object from a listening export into a scrobble:
/// a ListenBrainz listen or a Spotify extended streaming history entry.
/// These raw shapes never leave the importer.
enum ListenObjects {
    /// What one object turned out to be.
    enum Outcome {
        case scrobble(Scrobble, ScrobbleOrigin)
        /// Valid, but not a scrobble (a podcast, a short play); counted by reason.
        case skipped(String)
        case rejected(ImportProblem)
    }

    /// Last.fm counts a play once at least 30 seconds were heard.
    static let minimumSpotifyPlay = 30_000

    static func outcome(_ bytes: [UInt8]) -> Outcome {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return .rejected(.init("invalid JSON"))
        }
        guard let dictionary = object as? [String: Any] else { return .rejected(.init("not a JSON object")) }
        if dictionary["ms_played"] != nil || dictionary["ts"] != nil { return spotify(dictionary) }
        if dictionary["track_metadata"] != nil || dictionary["listened_at"] != nil { return listenBrainz(dictionary) }
        return .rejected(.init("neither a ListenBrainz listen nor a Spotify streaming history entry"))
    }

    /// `{"listened_at": 1580495100, "track_metadata": {"artist_name", "release_name", "track_name",
    /// "additional_info": {"recording_mbid", "release_mbid", "artist_mbids": [...]}}}`
    static func listenBrainz(_ d: [String: Any]) -> Outcome {
        guard let instant = instant(d["listened_at"]) else { return .rejected(.init("missing or invalid listened_at")) }
        guard let metadata = d["track_metadata"] as? [String: Any] else { return .rejected(.init("missing track_metadata")) }
        guard let artist = text(metadata["artist_name"]) else { return .rejected(.init("missing track_metadata.artist_name")) }
        guard let track = text(metadata["track_name"]) else { return .rejected(.init("missing track_metadata.track_name")) }
        let album = text(metadata["release_name"]) ?? ""
        let info = metadata["additional_info"] as? [String: Any] ?? [:]
        let mapping = metadata["mbid_mapping"] as? [String: Any] ?? [:]
        func mbid(_ key: String) -> String? { text(info[key]) ?? text(mapping[key]) }
        let artistMBID = firstText(info["artist_mbids"]) ?? firstText(mapping["artist_mbids"])
        return .scrobble(Scrobble(instant: instant, artist: artist, album: album, track: track,
                                  artistMBID: artistMBID, albumMBID: mbid("release_mbid"), trackMBID: mbid("recording_mbid")),
                         .listenBrainz)
    }

    /// `{"ts": "2020-01-31T18:25:07Z", "ms_played": 201000, "master_metadata_track_name",
    /// "master_metadata_album_artist_name", "master_metadata_album_album_name", ...}`
    ///
    /// `ts` is when playback *ended*; the scrobble's instant is `ts` minus
    /// the time played, i.e. when the play started, which is what Last.fm
    /// records (so the same play imported from Spotify and synced from
    /// Last.fm lands on about the same second and the same week).
    static func spotify(_ d: [String: Any]) -> Outcome {
        guard let ts = text(d["ts"]), let end = Timestamps.iso8601(ts) else { return .rejected(.init("missing or invalid ts")) }
        guard let played = whole(d["ms_played"]), played >= 0 else { return .rejected(.init("missing or invalid ms_played")) }
        guard let track = text(d["master_metadata_track_name"]) else {
            return .skipped("entries without a track (podcasts)")
        }
        guard played >= minimumSpotifyPlay else { return .skipped("plays shorter than 30 seconds") }
        guard let artist = text(d["master_metadata_album_artist_name"]) else {
            return .rejected(.init("missing master_metadata_album_artist_name"))
        }
        let album = text(d["master_metadata_album_album_name"]) ?? ""
        // Both fit easily: `end` is a 4-digit-year date, `played / 1000` at most Int64.max / 1000.
        return .scrobble(Scrobble(instant: end - played / 1000, artist: artist, album: album, track: track), .spotify)
    }

    static func text(_ value: Any?) -> String? {
        guard let string = value as? String else { return nil }
        let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// A JSON number as a whole `Int64` (a fraction is dropped), or `nil`
    /// when it is not a number or does not fit: `int64Value` alone wraps
    /// 99999999999999999999999 round to 200376420520689663.
    static func whole(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber, !(value is Bool) else { return nil }
        let double = number.doubleValue.rounded(.towardZero)
        // Clearly outside Int64 (±9.22e18): no conversion can be right.
        guard double.isFinite, abs(double) < 9.3e18 else { return nil }
        // Near the ends a Double cannot tell; `int64Value` is exact for an
        // integer that fits and far off (wrapped) for one that does not.
        // 2048 is a Double's spacing just below 2^63.
        let exact = number.int64Value
        return abs(Double(exact) - double) <= 2048 ? exact : nil
    }

    static func firstText(_ value: Any?) -> String? {
        (value as? [Any])?.lazy.compactMap { text($0) }.first
    }

    /// Unix seconds as a number, a numeric string, or an ISO 8601 string.
    static func instant(_ value: Any?) -> Int64? {
        if value is NSNumber {
            guard let seconds = whole(value) else { return nil }
            return seconds > 0 ? seconds : nil
        }
        guard let string = text(value) else { return nil }
        if let seconds = Int64(string), seconds > 0 { return seconds }
        return Timestamps.iso8601(string)
    }
}
