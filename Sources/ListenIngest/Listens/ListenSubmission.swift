import Foundation
import VinylogueCore

/// A `POST /1/submit-listens` body, checked as ListenBrainz checks it: a
/// listen type, and one listen (`single`, `playing_now`) or up to 1,000
/// (`import`), each with an artist and a track, and a believable time
/// except when it is playing now. Anything else is refused whole with a
/// sentence (`ListenSubmission.Problem`), so nothing of a bad payload is
/// stored.
package struct ListenSubmission: Sendable {
    package enum ListenType: String, Sendable {
        case single
        case playingNow = "playing_now"
        case `import`
    }

    /// One listen as received: a scrobble, and how long the track lasts
    /// when the player said (for how long "playing now" lasts).
    package struct Listen: Sendable {
        package let scrobble: Scrobble
        package let duration: Int64?
    }

    /// Why a payload was refused: a sentence for the client.
    package struct Problem: Error, Equatable {
        package let message: String
        package init(_ message: String) { self.message = message }
    }

    package let type: ListenType
    package let listens: [Listen]

    /// ListenBrainz's own limits.
    package static let maxListens = 1000
    /// 10 KiB a listen, 1,000 listens: ListenBrainz's payload cap.
    package static let maxBodyBytes = 10_240 * maxListens

    /// Reads and checks `body`; `now` bounds the listens' times.
    package init(json body: Data, now: Date) throws(Problem) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(body)
        } catch {
            throw Problem("The body is not a JSON document.")
        }
        guard case .object(let top) = document else { throw Problem("The JSON document must be an object with listen_type and payload.") }
        guard let typeValue = top["listen_type"], let payloadValue = top["payload"] else {
            throw Problem("JSON document must contain listen_type and payload.")
        }
        guard case .string(let typeName) = typeValue, let type = ListenType(rawValue: typeName) else {
            throw Problem("listen_type must be one of single, playing_now or import.")
        }
        guard case .array(let payload) = payloadValue else { throw Problem("payload must be a list of listens.") }
        guard !payload.isEmpty else { throw Problem("JSON document does not contain any listens.") }
        switch type {
        case .single, .playingNow:
            if payload.count > 1 { throw Problem("A \(type.rawValue) submission must contain exactly one listen; it has \(payload.count).") }
        case .import:
            if payload.count > Self.maxListens {
                throw Problem("A submission may contain at most \(Self.maxListens) listens; it has \(payload.count).")
            }
        }
        let nowSeconds = Int64(now.timeIntervalSince1970)
        let times = ListenFields.times(now: now)
        var listens: [Listen] = []
        listens.reserveCapacity(payload.count)
        for (index, value) in payload.enumerated() {
            listens.append(try Self.listen(value, type: type, times: times, now: nowSeconds, number: index + 1, of: payload.count))
        }
        self.type = type
        self.listens = listens
    }

    private static func listen(_ value: JSONValue, type: ListenType, times: ClosedRange<Int64>, now: Int64,
                               number: Int, of count: Int) throws(Problem) -> Listen {
        let which = count == 1 ? "The listen" : "Listen \(number)"
        guard case .object(let fields) = value else { throw Problem("\(which) is not a JSON object.") }
        var instant = now
        switch (type, fields["listened_at"]) {
        case (.playingNow, .some(_)):
            throw Problem("A playing_now listen must not contain listened_at.")
        case (.playingNow, nil):
            break
        case (_, nil):
            throw Problem("\(which) must contain listened_at.")
        case (_, .some(let time)):
            guard case .integer(let seconds) = time else { throw Problem("\(which)'s listened_at must be a whole number of seconds since 1970.") }
            switch ListenFields.check(seconds, in: times) {
            case .tooOld: throw Problem("\(which)'s listened_at \(seconds) is before 2002-01-01, when scrobbling began.")
            case .tooNew: throw Problem("\(which)'s listened_at \(seconds) is in the future.")
            case .believable: instant = seconds
            }
        }
        guard case .object(let metadata)? = fields["track_metadata"] else {
            throw Problem("\(which) must contain track_metadata, an object.")
        }
        guard let artist = try name(metadata["artist_name"], "artist_name", of: which, required: true),
              let track = try name(metadata["track_name"], "track_name", of: which, required: true) else {
            throw Problem("\(which) must contain track_metadata.artist_name and track_name.")
        }
        let album = try name(metadata["release_name"], "release_name", of: which, required: false)
        var artistMBID: String?, albumMBID: String?, trackMBID: String?, duration: Int64?, albumArtist: String?, groupMBID: String?
        switch metadata["additional_info"] {
        case nil, .null?: break
        case .object(let info)?:
            switch info["artist_mbids"] {
            case nil, .null?: break
            case .array(let ids)?:
                for id in ids {
                    guard case .string(let text) = id, isMBID(text) else {
                        throw Problem("\(which)'s artist_mbids must be a list of MusicBrainz ids (UUIDs).")
                    }
                    if artistMBID == nil { artistMBID = text.lowercased() }
                }
            default: throw Problem("\(which)'s artist_mbids must be a list of MusicBrainz ids (UUIDs).")
            }
            albumMBID = try mbid(info["release_mbid"], "release_mbid", of: which)
            trackMBID = try mbid(info["recording_mbid"], "recording_mbid", of: which)
            groupMBID = try mbid(info["release_group_mbid"], "release_group_mbid", of: which)
            // The album's artist, as ListenBrainz's Spotify listens and
            // many players name it.
            albumArtist = try name(info["release_artist_name"], "release_artist_name", of: which, required: false, in: "additional_info")
            switch info["duration_ms"] {
            case nil, .null?: break
            case .integer(let ms)? where ms > 0: duration = ms / 1000
            default: throw Problem("\(which)'s duration_ms must be a positive whole number of milliseconds.")
            }
        default:
            throw Problem("\(which)'s additional_info must be an object.")
        }
        let scrobble = Scrobble(instant: instant, artist: artist, album: album ?? "", track: track,
                                artistMBID: artistMBID, albumMBID: albumMBID, trackMBID: trackMBID, albumArtist: albumArtist,
                                releaseGroupMBID: groupMBID)
        return Listen(scrobble: scrobble, duration: duration)
    }

    private static func name(_ value: JSONValue?, _ key: String, of which: String, required: Bool,
                             in object: String = "track_metadata") throws(Problem) -> String? {
        switch value {
        case nil, .null?:
            if required { throw Problem("\(which) must contain \(object).\(key).") }
            return nil
        case .string(let text)?:
            switch ListenFields.name(text) {
            case .success(let name): return name
            case .failure(.empty) where !required: return nil
            case .failure(let problem): throw Problem("\(which)'s \(key) \(problem.predicate).")
            }
        default:
            throw Problem("\(which)'s \(key) must be a string.")
        }
    }

    private static func mbid(_ value: JSONValue?, _ key: String, of which: String) throws(Problem) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where isMBID(text): return text.lowercased()
        default: throw Problem("\(which)'s \(key) must be a MusicBrainz id (a UUID).")
        }
    }

    package static func isMBID(_ text: String) -> Bool { ListenFields.isMBID(text) }
}
