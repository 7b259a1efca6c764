import Foundation
import VinylogueCore

/// A fresh directory under the system's temporary directory, removed when
/// the value goes away.
public struct TemporaryDirectory: ~Copyable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `contents` to the file `name` in the directory; its path.
    public func file(_ name: String, _ contents: String) throws -> String {
        let path = url.appendingPathComponent(name).path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// A Last.fm CSV line (with the uts header layout), quoting every text field.
public func csvLine(_ s: Scrobble) -> String {
    func q(_ text: String?) -> String { "\"" + (text ?? "").replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    return "\(s.instant),\(q("x")),\(q(s.artist)),\(q(s.artistMBID)),\(q(s.album)),\(q(s.albumMBID)),\(q(s.track)),\(q(s.trackMBID))"
}

/// The header of a Last.fm CSV export with the uts layout (`csvLine`).
public let csvHeader = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"
