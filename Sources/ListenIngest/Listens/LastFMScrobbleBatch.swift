import Foundation
import VinylogueCore

/// A `track.scrobble` request's scrobbles, read from Last.fm's indexed form
/// fields (`artist[i]`, `track[i]`, `timestamp[i]`, `album[i]`,
/// `albumArtist[i]`, `mbid[i]`, … for i in 0..<50; or the same names
/// without an index for one scrobble) and checked one by one, as Last.fm
/// does: a scrobble without an artist or a track, or with an unbelievable
/// time, is ignored with its `ignoredMessage` code and the others are kept.
/// Only a request that cannot be read as scrobbles at all (none, more than
/// 50, an index without a whole-number `timestamp`) is refused whole
/// (error 6, nothing stored).
///
/// Unlike Last.fm, which ignores scrobbles older than two weeks, any time
/// since 2002 is kept: this is an archive, and players replay caches late.
package struct LastFMScrobbleBatch: Sendable {
    /// Last.fm's `ignoredMessage` codes.
    package enum Ignored: Int, Sendable {
        case artist = 1
        case track = 2
        case timestampTooOld = 3
        case timestampTooNew = 4
    }

    /// One scrobble as the answer echoes it, and what became of it.
    package struct Item: Sendable {
        package let artist: String
        package let track: String
        package let album: String
        package let albumArtist: String
        package let timestamp: Int64
        /// The scrobble kept, or why it was ignored.
        package let outcome: Result<Scrobble, IgnoredScrobble>
    }

    package struct IgnoredScrobble: Error, Sendable {
        package let code: Ignored
        package let message: String
    }

    /// Why the whole request was refused: a sentence for error 6.
    package struct Problem: Error, Equatable {
        package let message: String
        package init(_ message: String) { self.message = message }
    }

    package static let maxScrobbles = 50

    package let items: [Item]

    package var accepted: [Scrobble] { items.compactMap { try? $0.outcome.get() } }

    /// Reads the scrobbles in `fields`; `now` bounds their times.
    package init(fields: [String: String], now: Date) throws(Problem) {
        var indices = Set<Int>()
        for key in fields.keys {
            guard let open = key.firstIndex(of: "["), key.hasSuffix("]") else { continue }
            let number = key[key.index(after: open)..<key.index(before: key.endIndex)]
            guard let index = Int(number), index >= 0, number.allSatisfy(\.isASCII) else {
                throw Problem("\(key) is not a scrobble field: indices are whole numbers from 0 to \(Self.maxScrobbles - 1).")
            }
            guard index < Self.maxScrobbles else { throw Problem("At most \(Self.maxScrobbles) scrobbles may be sent at once (indices 0 to 49).") }
            indices.insert(index)
        }
        let field: (String, Int?) -> String? = { name, index in fields[index.map { "\(name)[\($0)]" } ?? name] }
        let positions: [Int?] = indices.isEmpty ? (fields["timestamp"] != nil || fields["artist"] != nil || fields["track"] != nil ? [nil] : [])
                                                : indices.sorted().map { $0 }
        guard !positions.isEmpty else { throw Problem("There are no scrobbles: send artist[0], track[0] and timestamp[0].") }
        let times = ListenFields.times(now: now)
        var items: [Item] = []
        for index in positions {
            let label = index.map { "timestamp[\($0)]" } ?? "timestamp"
            guard let text = field("timestamp", index) else { throw Problem("\(label) is required.") }
            guard let timestamp = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                throw Problem("\(label) must be a whole number of seconds since 1970.")
            }
            items.append(Self.item(artist: field("artist", index) ?? "", track: field("track", index) ?? "",
                                   album: field("album", index) ?? "", albumArtist: field("albumArtist", index) ?? "",
                                   mbid: field("mbid", index), timestamp: timestamp, times: times))
        }
        self.items = items
    }

    /// The artist and track names cleaned, or the first that cannot be kept
    /// with its code (for scrobbles and for now playing alike).
    package static func names(artist: String, track: String) -> Result<(artist: String, track: String), IgnoredScrobble> {
        switch (ListenFields.name(artist), ListenFields.name(track)) {
        case (.failure(let problem), _): .failure(IgnoredScrobble(code: .artist, message: "Artist name \(problem.predicate)"))
        case (_, .failure(let problem)): .failure(IgnoredScrobble(code: .track, message: "Track name \(problem.predicate)"))
        case (.success(let artist), .success(let track)): .success((artist, track))
        }
    }

    private static func item(artist rawArtist: String, track rawTrack: String, album rawAlbum: String, albumArtist: String,
                             mbid: String?, timestamp: Int64, times: ClosedRange<Int64>) -> Item {
        let make = { (outcome: Result<Scrobble, IgnoredScrobble>) in
            Item(artist: rawArtist, track: rawTrack, album: rawAlbum, albumArtist: albumArtist, timestamp: timestamp, outcome: outcome)
        }
        let artist: String, track: String
        switch names(artist: rawArtist, track: rawTrack) {
        case .success(let names): (artist, track) = names
        case .failure(let ignored): return make(.failure(ignored))
        }
        switch ListenFields.check(timestamp, in: times) {
        case .tooOld: return make(.failure(IgnoredScrobble(code: .timestampTooOld, message: "Timestamp is before 2002, when scrobbling began")))
        case .tooNew: return make(.failure(IgnoredScrobble(code: .timestampTooNew, message: "Timestamp is in the future")))
        case .believable: break
        }
        // An album or album artist that cannot be kept is left out, not a
        // reason to lose the play.
        let album = (try? ListenFields.name(rawAlbum).get()) ?? ""
        let keptAlbumArtist = try? ListenFields.name(albumArtist).get()
        let trackMBID = mbid.flatMap { ListenFields.isMBID($0) ? $0.lowercased() : nil }
        return make(.success(Scrobble(instant: timestamp, artist: artist, album: album, track: track, trackMBID: trackMBID,
                                      albumArtist: keptAlbumArtist)))
    }
}
