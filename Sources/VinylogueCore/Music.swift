import Foundation

/// A Last.fm user's public profile.
public struct User: Sendable, Hashable, Codable {
    /// The name in Last.fm's canonical casing.
    public let name: Username
    public let realName: String?
    public let imageURL: String?
    public let registered: Date?
    public let playCount: Int
    public let url: String?

    public init(name: Username, realName: String? = nil, imageURL: String? = nil, registered: Date? = nil, playCount: Int = 0, url: String? = nil) {
        self.name = name
        self.realName = realName.flatMap { $0.isEmpty ? nil : $0 }
        self.imageURL = imageURL.flatMap { $0.isEmpty ? nil : $0 }
        self.registered = registered
        self.playCount = playCount
        self.url = url
    }
}

/// The sizes Last.fm offers album and user images in.
public enum ImageSize: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case small, medium, large, extralarge, mega

    public static func < (lhs: ImageSize, rhs: ImageSize) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Everything the album page shows about one album.
public struct AlbumDetail: Sendable, Hashable, Codable {
    /// One track of the album.
    public struct Track: Sendable, Hashable, Codable {
        public let rank: Int
        public let name: String
        /// Length in seconds, when known.
        public let duration: Int?

        public init(rank: Int, name: String, duration: Int?) {
            self.rank = rank
            self.name = name
            self.duration = duration.flatMap { $0 > 0 ? $0 : nil }
        }
    }

    public let artist: String
    public let name: String
    public let mbid: String?
    public let url: String?
    /// Image URLs by size; sizes with an empty URL are left out.
    public let images: [ImageSize: String]
    /// The wiki summary reduced to plain paragraphs and safe links.
    public let summary: WikiText?
    public let listeners: Int
    public let playCount: Int
    /// The asking user's all-time plays of this album, when a user was given.
    public let userPlayCount: Int?
    public let tags: [String]
    public let tracks: [Track]

    public init(artist: String, name: String, mbid: String?, url: String?, images: [ImageSize: String], summary: WikiText?, listeners: Int, playCount: Int, userPlayCount: Int?, tags: [String], tracks: [Track]) {
        self.artist = artist
        self.name = name
        self.mbid = mbid.flatMap { $0.isEmpty ? nil : $0 }
        self.url = url
        self.images = images
        self.summary = summary
        self.listeners = listeners
        self.playCount = playCount
        self.userPlayCount = userPlayCount
        self.tags = tags
        self.tracks = tracks
    }

    /// The largest image available.
    public var largestImage: String? {
        ImageSize.allCases.reversed().lazy.compactMap { images[$0] }.first
    }
}

/// One play of one track at one instant.
public struct Scrobble: Sendable, Hashable, Codable {
    /// Unix seconds.
    public let instant: Int64
    public let artist: String
    /// Empty when the album is unknown.
    public let album: String
    public let track: String
    public let artistMBID: String?
    public let albumMBID: String?
    public let trackMBID: String?
    /// The album's artist as the player named it ("Various Artists" on a
    /// compilation, the band on a track with a guest), kept as sent; nil
    /// when the listen named none (Last.fm's history never does).
    public let albumArtist: String?
    /// The MusicBrainz release group of the album (every edition and
    /// reissue of it), where the listen named one (ListenBrainz's
    /// `release_group_mbid`).
    public let releaseGroupMBID: String?

    public init(instant: Int64, artist: String, album: String, track: String, artistMBID: String? = nil, albumMBID: String? = nil,
                trackMBID: String? = nil, albumArtist: String? = nil, releaseGroupMBID: String? = nil) {
        self.instant = instant
        self.artist = artist
        self.album = album
        self.track = track
        self.artistMBID = artistMBID.flatMap { $0.isEmpty ? nil : $0 }
        self.albumMBID = albumMBID.flatMap { $0.isEmpty ? nil : $0 }
        self.trackMBID = trackMBID.flatMap { $0.isEmpty ? nil : $0 }
        self.albumArtist = albumArtist.flatMap { $0.isEmpty ? nil : $0 }
        self.releaseGroupMBID = releaseGroupMBID.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whose album the listen counts for: its album artist where it names
    /// one, otherwise its track artist (whose featured credits the album
    /// rule drops, `AlbumIdentity.artist`).
    public var artistOfAlbum: String { albumArtist ?? artist }
}

/// One page of a user's recent tracks, newest first.
public struct ScrobblePage: Sendable, Hashable {
    public let scrobbles: [Scrobble]
    public let page: Int
    public let totalPages: Int
    public let total: Int

    public init(scrobbles: [Scrobble], page: Int, totalPages: Int, total: Int) {
        self.scrobbles = scrobbles
        self.page = page
        self.totalPages = totalPages
        self.total = total
    }
}
