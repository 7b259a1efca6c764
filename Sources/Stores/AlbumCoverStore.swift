import Foundation
import VinylogueCore

/// What Last.fm answered, once, about an album's cover: an image, or that
/// it has none. Remembered by an `AlbumCoverStore` so that the question is
/// never asked again (and pages show covers with Last.fm unreachable).
public enum CoverAnswer: Sendable, Hashable {
    /// The cover, named the only way an image is named in Vinylogue.
    case cover(ArtworkAddress)
    /// Last.fm knows no cover for this album (or no such album at all).
    case noCover

    /// The cover's address, nil for `.noCover`.
    public var address: ArtworkAddress? {
        if case .cover(let address) = self { return address }
        return nil
    }
}

/// An album as covers are keyed: artist and album name compared without
/// regard to case (Swift's Unicode lowercasing, as the charts merge
/// spellings), so every spelling of one album shares one answer.
public struct AlbumKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let artist: String
    public let album: String

    public init(artist: String, album: String) {
        self.artist = artist.lowercased()
        self.album = album.lowercased()
    }

    public static func < (lhs: AlbumKey, rhs: AlbumKey) -> Bool { (lhs.artist, lhs.album) < (rhs.artist, rhs.album) }

    public var description: String { "\(artist) – \(album)" }
}

/// One album of a person's archive: its most played spelling, its plays,
/// and a MusicBrainz id when any of its scrobbles carried one.
public struct ArchivedAlbum: Sendable, Hashable {
    public let artist: String
    public let name: String
    public let mbid: String?
    public let plays: Int

    public init(artist: String, name: String, mbid: String?, plays: Int) {
        self.artist = artist
        self.name = name
        self.mbid = mbid.flatMap { $0.isEmpty ? nil : $0 }
        self.plays = plays
    }

    public var key: AlbumKey { AlbumKey(artist: artist, album: name) }
}

/// Album covers, remembered: Last.fm's answer about each album's cover
/// (including "no cover"), kept in the database so it survives restarts
/// and is shared by every instance of a fleet. Not personal: an album's
/// cover is the same for everyone, so rows are keyed by the album alone.
///
/// `SQLiteAlbumCoverStore` (the data directory's database) and
/// `PostgresAlbumCoverStore` play it; `StoreContractTests` holds both to
/// one contract.
public protocol AlbumCoverStore: Sendable {
    /// The remembered answers for `albums`; albums never resolved are
    /// absent. A stored address that is not a valid `ArtworkAddress` (a row
    /// written by hand) counts as never resolved.
    func answers(for albums: [AlbumKey]) async throws(SourceError) -> [AlbumKey: CoverAnswer]
    /// Remembers `answer` for the album `artist` / `name` (replacing an
    /// earlier answer), as learned at `instant`.
    func remember(_ answer: CoverAnswer, artist: String, name: String, at instant: Date) async throws(SourceError)
    /// The albums in `user`'s archive (scrobbles with an album name),
    /// spellings merged by `AlbumKey`, most played first (ties by key); empty
    /// when nothing is archived for `user`.
    func archivedAlbums(of user: Username) async throws(SourceError) -> [ArchivedAlbum]
}

extension AlbumCoverStore {
    /// The remembered answer for one album, if any.
    public func answer(artist: String, name: String) async throws(SourceError) -> CoverAnswer? {
        let key = AlbumKey(artist: artist, album: name)
        return try await answers(for: [key])[key]
    }
}

/// Merges per-spelling album counts into `ArchivedAlbum`s: one per
/// `AlbumKey`, named by its most played spelling, most played first. Both
/// stores count per exact spelling in SQL and merge here, so they agree.
public struct ArchivedAlbumTally: Sendable {
    private struct Spelling: Sendable {
        let artist: String
        let name: String
        let mbid: String?
        let plays: Int

        /// Most played first; the exact text breaks ties, so the name is
        /// the same whichever order the rows came in.
        func comesBefore(_ other: Spelling) -> Bool {
            if plays != other.plays { return plays > other.plays }
            if artist != other.artist { return artist < other.artist }
            return name < other.name
        }
    }

    private var groups: [AlbumKey: [Spelling]] = [:]

    public init() {}

    /// Adds `plays` of one exact spelling.
    public mutating func add(artist: String, name: String, mbid: String?, plays: Int) {
        let spelling = Spelling(artist: artist, name: name, mbid: mbid.flatMap { $0.isEmpty ? nil : $0 }, plays: plays)
        groups[AlbumKey(artist: artist, album: name), default: []].append(spelling)
    }

    /// The albums, most played first (ties by key).
    public var albums: [ArchivedAlbum] {
        var merged: [(key: AlbumKey, album: ArchivedAlbum)] = []
        for (key, spellings) in groups {
            let ordered = spellings.sorted { $0.comesBefore($1) }
            let plays = spellings.reduce(0) { $0 + $1.plays }
            let mbid = ordered.lazy.compactMap(\.mbid).first
            merged.append((key, ArchivedAlbum(artist: ordered[0].artist, name: ordered[0].name, mbid: mbid, plays: plays)))
        }
        merged.sort { $0.album.plays != $1.album.plays ? $0.album.plays > $1.album.plays : $0.key < $1.key }
        return merged.map(\.album)
    }
}
