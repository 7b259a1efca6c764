import Foundation
import Stores
import VinylogueCore

/// The two Last.fm CSV layouts: which column holds what, and how a row
/// becomes a scrobble.
struct CSVRows {
    let format: ExportFormat
    let columns: Int
    let artist: Int, album: Int, track: Int
    /// Unix seconds (`uts`), or the header-less export's `date`.
    let time: Int
    let artistMBID: Int?, albumMBID: Int?, trackMBID: Int?
    /// An `album_artist` column, where the header names one.
    var albumArtist: Int? = nil

    /// The layout, and whether `firstLine` is its header.
    static func detect(firstLine: ArraySlice<UInt8>) -> (CSVRows, isHeader: Bool) {
        if case .success(let names) = CSVLine.fields(firstLine) {
            let lowered = names.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if let uts = lowered.firstIndex(of: "uts"), let artist = lowered.firstIndex(of: "artist"),
               let track = lowered.firstIndex(of: "track") {
                return (CSVRows(format: .lastFMCSVWithHeader, columns: names.count, artist: artist,
                                album: lowered.firstIndex(of: "album") ?? -1, track: track, time: uts,
                                artistMBID: lowered.firstIndex(of: "artist_mbid"), albumMBID: lowered.firstIndex(of: "album_mbid"),
                                trackMBID: lowered.firstIndex(of: "track_mbid"),
                                albumArtist: lowered.firstIndex { ["album_artist", "albumartist", "album artist"].contains($0) }), true)
            }
        }
        return (CSVRows(format: .lastFMCSV, columns: 4, artist: 0, album: 1, track: 2, time: 3,
                        artistMBID: nil, albumMBID: nil, trackMBID: nil), false)
    }

    func scrobble(_ line: ArraySlice<UInt8>) -> Result<Scrobble, ImportProblem> {
        let fields: [String]
        switch CSVLine.fields(line) {
        case .success(let f): fields = f
        case .failure(let problem): return .failure(problem)
        }
        guard fields.count == columns else {
            return .failure(.init("expected \(columns) columns, found \(fields.count)"))
        }
        let instant: Int64?
        if format == .lastFMCSVWithHeader {
            instant = Int64(fields[time]).flatMap { $0 > 0 ? $0 : nil }
        } else {
            instant = Timestamps.lastFMExportDate(fields[time])
        }
        guard let instant else { return .failure(.init("invalid date \(ImportProblem.quoted(fields[time]))")) }
        let artist = fields[artist], track = fields[track]
        guard !artist.isEmpty else { return .failure(.init("missing artist")) }
        guard !track.isEmpty else { return .failure(.init("missing track")) }
        return .success(Scrobble(instant: instant, artist: artist, album: album >= 0 ? fields[album] : "", track: track,
                                 artistMBID: artistMBID.map { fields[$0] }, albumMBID: albumMBID.map { fields[$0] },
                                 trackMBID: trackMBID.map { fields[$0] }, albumArtist: albumArtist.map { fields[$0] }))
    }
}
