import Foundation
import Stores
import VinylogueCore

/// One line of an Audioscrobbler 1.1 `.scrobbler.log`, as Rockbox and
/// other portable players write it:
///
///     #AUDIOSCROBBLER/1.1
///     #TZ/UNKNOWN            (or #TZ/UTC)
///     #CLIENT/Rockbox sansaclipplus $Revision$
///     ARTIST<TAB>ALBUM<TAB>TITLE<TAB>TRACKNUM<TAB>DURATION<TAB>RATING<TAB>TIMESTAMP<TAB>MBID
///
/// RATING is `L` (listened: played at least half, or 240 s) or `S`
/// (skipped): only `L` is a scrobble. TIMESTAMP is Unix seconds; under
/// `#TZ/UNKNOWN` the player's clock had no time zone, so the seconds are
/// its local wall time read as if it were UTC. Given the player's zone
/// (`vinylogue import --player-time-zone`), they are converted from it;
/// without one they are stored as they are (off by the player's UTC
/// offset) and the summary says so: the player's zone is not in the file,
/// and guessing the computer's zone would be wrong as often as right for a
/// player set while travelling.
enum ScrobblerLogLine {
    static let unknownZoneNote = "The .scrobbler.log says #TZ/UNKNOWN: its times are the player's local clock and were "
        + "stored as if they were UTC, so they are off by the player's UTC offset (a few plays near Sunday noon may "
        + "fall in the next or previous week, and they will not be matched with the same plays from Last.fm). "
        + "To convert them, import it again into a fresh data directory with --player-time-zone (for example Europe/Berlin)."

    static func convertedNote(_ zone: TimeZone) -> String {
        "The .scrobbler.log says #TZ/UNKNOWN: its times were read as the player's clock in \(zone.identifier)."
    }

    /// `scrobble`, whose instant is a wall-clock time in `zone` written as
    /// if UTC, at its real instant. Around a daylight-saving change the
    /// offset is the one in force an offset's length away, so plays in the
    /// repeated or skipped hour may be an hour off.
    static func fromWallClock(_ scrobble: Scrobble, in zone: TimeZone) -> Scrobble {
        let guess = scrobble.instant.minus(Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(scrobble.instant)))))
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(guess))))
        return Scrobble(instant: scrobble.instant.minus(offset), artist: scrobble.artist, album: scrobble.album, track: scrobble.track,
                        artistMBID: scrobble.artistMBID, albumMBID: scrobble.albumMBID, trackMBID: scrobble.trackMBID)
    }

    static func outcome(_ line: ArraySlice<UInt8>) -> ListenObjects.Outcome {
        if line.first == UInt8(ascii: "#") {
            if line.elementsEqual("#TZ/UNKNOWN".utf8) { return .noted(unknownZoneNote) }
            return .ignored
        }
        guard !line.allSatisfy(JSONArraySplitter.isSpace) else { return .ignored }
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces) }
        guard fields.count >= 7 else {
            return .rejected(.init("expected 7 or 8 tab-separated fields (artist, album, title, track number, duration, rating, "
                + "timestamp, MusicBrainz id), found \(fields.count)"))
        }
        guard fields[5] == "L" || fields[5] == "S" else { return .rejected(.init("rating \(ImportProblem.quoted(fields[5])) is neither L nor S")) }
        guard let instant = Int64(fields[6]), instant > 0 else { return .rejected(.init("invalid timestamp \(ImportProblem.quoted(fields[6]))")) }
        guard !fields[0].isEmpty else { return .rejected(.init("missing artist")) }
        guard !fields[2].isEmpty else { return .rejected(.init("missing title")) }
        guard fields[5] == "L" else { return .skipped("tracks skipped on the player (rating S)") }
        let mbid = fields.count > 7 && !fields[7].isEmpty ? fields[7] : nil
        return .scrobble(Scrobble(instant: instant, artist: fields[0], album: fields[1], track: fields[2], trackMBID: mbid), .scrobblerLog)
    }
}
