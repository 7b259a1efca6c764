import Foundation
import GRDB
import ZIPFoundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

extension TemporaryDirectory {
    func store(_ name: String = "data") throws -> SQLiteScrobbleStore {
        SQLiteScrobbleStore(database: try ArchiveDatabase(directory: url.appendingPathComponent(name)))
    }
}

let alice = try! Username("alice")

/// An independent count of an album chart: plays per lowercased
/// (artist, album), albums without a name left out.
func independentAlbumCounts(_ scrobbles: [Scrobble], in week: ChartWeek) -> [String: Int] {
    var counts: [String: Int] = [:]
    for s in scrobbles where week.contains(s.instant) && !s.album.isEmpty {
        counts[s.artist.lowercased() + " / " + s.album.lowercased(), default: 0] += 1
    }
    return counts
}

func counts(of chart: WeeklyChart) -> [String: Int] {
    Dictionary(uniqueKeysWithValues: chart.entries.map { ($0.artist.lowercased() + " / " + $0.name.lowercased(), $0.plays) })
}

/// "Now" for imports in tests: 5 November 2026, after every made-up export.
let testClock = WallClock.fixed(Date(timeIntervalSince1970: 1_794_000_000))

/// Writes a ZIP archive of `members` (path, contents) at `url` with ZIPFoundation, as an export site would.
func makeZIP(at url: URL, _ members: [(String, String)], compression: CompressionMethod = .deflate) throws {
    try makeZIP(at: url, members.map { ($0.0, Data($0.1.utf8)) }, compression: compression)
}

/// Writes a ZIP archive of members given as bytes.
func makeZIP(at url: URL, _ members: [(String, Data)], compression: CompressionMethod = .deflate) throws {
    let archive = try ZIPFoundation.Archive(url: url, accessMode: .create)
    for (path, data) in members {
        try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: compression) { position, size in
            data.subdata(in: Int(position)..<(Int(position) + size))
        }
    }
}

/// A ListenBrainz listen as one JSON line (the shape of `listens/YYYY/M.jsonl`).
func listenLine(_ instant: Int64, _ artist: String, _ track: String, album: String = "An Album") -> String {
    #"{"listened_at": \#(instant), "recording_msid": "00000000-0000-0000-0000-000000000000", "#
        + #""track_metadata": {"artist_name": "\#(artist)", "release_name": "\#(album)", "track_name": "\#(track)", "#
        + #""additional_info": {"submission_client": "test"}}}"#
}

/// A Spotify extended streaming history entry.
func spotifyEntry(ending end: String, ms: Int, _ artist: String?, _ track: String?, album: String = "An Album") -> String {
    func j(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "null" }
    return #"{"ts": "\#(end)", "platform": "linux", "ms_played": \#(ms), "conn_country": "DE", "#
        + #""master_metadata_track_name": \#(j(track)), "master_metadata_album_artist_name": \#(j(artist)), "#
        + #""master_metadata_album_album_name": \#(j(track == nil ? nil : album)), "spotify_track_uri": null, "#
        + #""episode_name": \#(track == nil ? "\"An Episode\"" : "null"), "reason_start": "trackdone", "reason_end": "trackdone", "#
        + #""shuffle": false, "skipped": false, "offline": false, "incognito_mode": false}"#
}
