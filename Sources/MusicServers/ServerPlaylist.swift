import Foundation
import VinylogueCore

/// A week's playlist (`WeekPlaylist`) made on a person's Subsonic-API
/// server: each album of the week looked for in the library (`search3`,
/// editions matched as album identity folds them: "Abbey Road (Remastered)"
/// played finds the library's "Abbey Road"), then its songs: those played
/// that week, by title, or the whole album when the library names its
/// tracks otherwise. Saved as one playlist named for the week, albums in
/// chart order, replacing the one of that name Vinylogue made before.
public struct ServerPlaylist: Sendable {
    public let name: String
    public let songs: [SubsonicClient.Song]
    /// The week's albums found in the library, and those not, in chart order.
    public let found: [WeekPlaylist.Album]
    public let missing: [WeekPlaylist.Album]
    /// Whether a playlist of that name was there before (its songs replaced).
    public let replaced: Bool

    /// Whether anything was saved (nothing is when no album was found).
    public var saved: Bool { !songs.isEmpty }

    /// Matches `playlist` to the library `client` reaches and saves it.
    public static func save(_ playlist: WeekPlaylist, on client: SubsonicClient) async throws(MusicServerError) -> ServerPlaylist {
        let folding = AlbumFolding.editions
        var songs: [SubsonicClient.Song] = []
        var found: [WeekPlaylist.Album] = [], missing: [WeekPlaylist.Album] = []
        for album in playlist.albums {
            let key = folding.folded(.album, artist: album.artist, name: album.name).key
            let candidates = try await client.searchAlbums(searchQuery(album.name), count: 50).filter {
                folding.folded(.album, artist: $0.artist, name: $0.name).key == key
            }
            guard let chosen = candidates.first(where: { $0.name.caseInsensitiveCompare(album.name) == .orderedSame }) ?? candidates.first else {
                missing.append(album)
                continue
            }
            let all = try await client.songs(ofAlbum: chosen.id)
            guard !all.isEmpty else {
                missing.append(album)
                continue
            }
            let played = Set(album.tracks.map { AlbumIdentity.comparable($0.title) })
            let chosenSongs = all.filter { played.contains(AlbumIdentity.comparable($0.title)) }
            songs += chosenSongs.isEmpty ? all : chosenSongs
            found.append(album)
        }
        let name = playlist.title
        guard !songs.isEmpty else { return ServerPlaylist(name: name, songs: [], found: [], missing: missing, replaced: false) }
        let existing = try await client.playlists().first { $0.name == name }
        try await client.savePlaylist(name: name, songs: songs.map(\.id), replacing: existing?.id)
        return ServerPlaylist(name: name, songs: songs, found: found, missing: missing, replaced: existing != nil)
    }

    /// What to search a library for: the album's name up to its first
    /// edition decoration ("Abbey Road (Remastered)" → "Abbey Road"), or
    /// the whole name when it has none (or is nothing but one).
    static func searchQuery(_ name: String) -> String {
        guard AlbumIdentity.title(name) != AlbumIdentity.comparable(name) else { return name }
        for separator in [" (", " [", " - ", " – ", " — "] {
            if let range = name.range(of: separator) {
                let head = name[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
                if !head.isEmpty { return head }
            }
        }
        return name
    }
}
