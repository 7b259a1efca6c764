import Foundation
import Stores
import VinylogueCore

/// Turns one decoded JSON object from a listening export into a scrobble:
/// a ListenBrainz listen, a Spotify streaming history entry (extended or
/// account data), a Maloja scrobble, or a page of a Last.fm JSON export.
/// These raw shapes never leave the importer.
enum ListenObjects {
    /// What one object turned out to be.
    enum Outcome {
        case scrobble(Scrobble, ScrobbleOrigin)
        /// Valid, but not a scrobble (a podcast, a short play); counted by reason.
        case skipped(String)
        case rejected(ImportProblem)
        /// Something the summary should say once about the whole member.
        case noted(String)
        /// Nothing to count (a header line).
        case ignored
    }

    /// Last.fm counts a play once at least 30 seconds were heard.
    static let minimumSpotifyPlay = 30_000

    static func outcome(_ bytes: [UInt8], as format: ExportFormat) -> Outcome {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return .rejected(.init("invalid JSON"))
        }
        guard let dictionary = object as? [String: Any] else { return .rejected(.init("not a JSON object")) }
        switch format {
        case .spotifyJSON: return spotify(dictionary)
        case .spotifyAccountJSON: return spotifyAccount(dictionary)
        case .malojaJSON: return maloja(dictionary)
        case .lastFMJSON: return lastFMTrack(dictionary)
        default: return listenBrainz(dictionary)
        }
    }

    /// One element of a Last.fm JSON export: a page (an array of
    /// `user.getRecentTracks` track objects, or an object holding one in
    /// `track` or `recenttracks.track`), or one track object.
    static func lastFMPage(_ bytes: [UInt8]) -> [Outcome] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return [.rejected(.init("invalid JSON"))]
        }
        if let tracks = object as? [Any] { return tracks.map(lastFMTrack) }
        guard let dictionary = object as? [String: Any] else { return [.rejected(.init("neither a page of scrobbles nor a scrobble"))] }
        if let tracks = dictionary["track"] as? [Any] { return tracks.map(lastFMTrack) }
        if let tracks = (dictionary["recenttracks"] as? [String: Any])?["track"] as? [Any] { return tracks.map(lastFMTrack) }
        return [lastFMTrack(dictionary)]
    }

    /// `{"artist": {"#text": "Radiohead", "mbid": "…"}, "name": "Airbag", "mbid": "…",
    /// "album": {"#text": "OK Computer", "mbid": "…"}, "date": {"uts": "1580495100", "#text": "31 Jan 2020, 18:25"}}`
    /// (extended pages name the artist in `name` instead of `#text`). The
    /// track being played right now (`"@attr": {"nowplaying": "true"}`) is
    /// not a scrobble yet.
    static func lastFMTrack(_ value: Any) -> Outcome {
        guard let d = value as? [String: Any] else { return .rejected(.init("a scrobble that is not a JSON object")) }
        if let attributes = d["@attr"] as? [String: Any], "\(attributes["nowplaying"] ?? "")" == "true" {
            return .skipped("tracks playing at export time (not scrobbled yet)")
        }
        guard let date = d["date"] as? [String: Any], let instant = instant(date["uts"]) else {
            return .rejected(.init("missing or invalid date.uts"))
        }
        func named(_ value: Any?) -> String? {
            if let object = value as? [String: Any] { return text(object["#text"]) ?? text(object["name"]) }
            return text(value)
        }
        guard let artist = named(d["artist"]) else { return .rejected(.init("missing artist")) }
        guard let track = text(d["name"]) else { return .rejected(.init("missing track name")) }
        let album = named(d["album"]) ?? ""
        return .scrobble(Scrobble(instant: instant, artist: artist, album: album, track: track,
                                  artistMBID: text((d["artist"] as? [String: Any])?["mbid"]),
                                  albumMBID: text((d["album"] as? [String: Any])?["mbid"]), trackMBID: text(d["mbid"])),
                         .lastFMExport)
    }

    /// Maloja's export: `{"time": 1580495100, "track": {"artists": ["Portishead"], "title": "Roads",
    /// "album": {"albumtitle": "Dummy", "artists": [...]}, "length": 305}, "duration": 290, "origin": "client:x"}`
    /// (older versions name the album `name`). Several artists are joined
    /// with ", ", as ListenBrainz does when it imports Maloja; so are the
    /// album's own artists, kept as its album artist.
    static func maloja(_ d: [String: Any]) -> Outcome {
        guard let instant = instant(d["time"]) else { return .rejected(.init("missing or invalid time")) }
        guard let trackObject = d["track"] as? [String: Any] else { return .rejected(.init("missing track")) }
        let artists = (trackObject["artists"] as? [Any])?.compactMap { text($0) } ?? []
        guard !artists.isEmpty else { return .rejected(.init("missing track.artists")) }
        guard let title = text(trackObject["title"]) else { return .rejected(.init("missing track.title")) }
        let albumObject = trackObject["album"] as? [String: Any]
        let album = text(albumObject?["albumtitle"]) ?? text(albumObject?["name"]) ?? ""
        let albumArtists = (albumObject?["artists"] as? [Any])?.compactMap { text($0) } ?? []
        return .scrobble(Scrobble(instant: instant, artist: artists.joined(separator: ", "), album: album, track: title,
                                  albumArtist: albumArtists.isEmpty ? nil : albumArtists.joined(separator: ", ")), .maloja)
    }

    /// Spotify account data (`StreamingHistory*.json`):
    /// `{"endTime": "2020-01-31 18:28", "artistName": "Portishead", "trackName": "Glory Box", "msPlayed": 201000}`.
    /// `endTime` is UTC, to the minute; the instant is the end minus the
    /// time played. There is no album: the play is kept with an empty album
    /// (it counts in artist and track charts) and the summary says so.
    static func spotifyAccount(_ d: [String: Any]) -> Outcome {
        guard let end = text(d["endTime"]).flatMap(Timestamps.minuteUTC) else { return .rejected(.init("missing or invalid endTime")) }
        guard let played = whole(d["msPlayed"]), played >= 0 else { return .rejected(.init("missing or invalid msPlayed")) }
        guard let track = text(d["trackName"]) else { return .skipped("entries without a track (podcasts)") }
        guard played >= minimumSpotifyPlay else { return .skipped("plays shorter than 30 seconds") }
        guard let artist = text(d["artistName"]) else { return .rejected(.init("missing artistName")) }
        return .scrobble(Scrobble(instant: end - played / 1000, artist: artist, album: "", track: track), .spotify)
    }

    /// `{"listened_at": 1580495100, "track_metadata": {"artist_name", "release_name", "track_name",
    /// "additional_info": {"recording_mbid", "release_mbid", "artist_mbids": [...], "release_artist_name",
    /// "release_group_mbid"}}}`
    /// (Vinylogue's own export has this shape).
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
                                  artistMBID: artistMBID, albumMBID: mbid("release_mbid"), trackMBID: mbid("recording_mbid"),
                                  albumArtist: text(info["release_artist_name"]), releaseGroupMBID: mbid("release_group_mbid")),
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
