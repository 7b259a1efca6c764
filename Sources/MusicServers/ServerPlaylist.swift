import Foundation
import VinylogueCore

/// A person's music library on a server of theirs (a Subsonic-API server,
/// mpd): its albums found by name, their songs, and playlists saved.
public protocol MusicLibrary: Sendable {
    /// The server, as sentences name it.
    var server: String { get }
    /// Whether it answers, signed in.
    func ping() async throws(MusicServerError)
    /// Albums whose name holds `query`, as the server searches.
    func albums(named query: String) async throws(MusicServerError) -> [LibraryAlbum]
    /// An album's songs, in disc and track order.
    func songs(of album: LibraryAlbum) async throws(MusicServerError) -> [LibrarySong]
    /// Makes the playlist `name` hold `songs`, in order, replacing one of
    /// that name; returns whether there was one.
    func savePlaylist(name: String, songs: [LibrarySong]) async throws(MusicServerError) -> Bool
}

/// An album as a library lists it.
public struct LibraryAlbum: Sendable, Hashable {
    /// The library's own name for it (a Subsonic id, mpd's album and artist).
    public let id: String
    public let name: String
    public let artist: String

    public init(id: String, name: String, artist: String) {
        self.id = id
        self.name = name
        self.artist = artist
    }
}

/// A song as a library lists it.
public struct LibrarySong: Sendable, Hashable {
    /// The library's own name for it (a Subsonic id, a file's path in mpd).
    public let id: String
    public let title: String
    public let artist: String
    public let album: String
    public let disc: Int
    public let track: Int

    public init(id: String, title: String, artist: String, album: String, disc: Int, track: Int) {
        self.id = id
        self.title = title
        self.artist = artist
        self.album = album
        self.disc = disc
        self.track = track
    }
}

/// Albums to play again (`AlbumPlaylist`: a week's, a year's, an album's) made in a person's music library
/// (`MusicLibrary`): each album of the week looked for there (by name,
/// editions matched as album identity folds them: "Abbey Road (Remastered)"
/// played finds the library's "Abbey Road"), then its songs: those played
/// that week, by title, or the whole album when the library names its
/// tracks otherwise. Saved as one playlist named for the week, albums in
/// chart order, replacing the one of that name Vinylogue made before.
public struct ServerPlaylist: Sendable {
    public let name: String
    public let songs: [LibrarySong]
    /// The week's albums found in the library, and those not, in chart order.
    public let found: [AlbumPlaylist.Album]
    public let missing: [AlbumPlaylist.Album]
    /// Whether a playlist of that name was there before (its songs replaced).
    public let replaced: Bool

    /// Whether anything was saved (nothing is when no album was found).
    public var saved: Bool { !songs.isEmpty }

    /// Matches `playlist` to `library` and saves it there.
    public static func save(_ playlist: AlbumPlaylist, on library: some MusicLibrary,
                            within budget: Duration = matchBudget) async throws(MusicServerError) -> ServerPlaylist {
        try await match(playlist, in: library, within: budget).save(on: library)
    }

    /// How long looking for all of a playlist's albums may take, however
    /// many lookups it makes: a server that answers each just in time
    /// does not hold a person's request (or a job) for minutes.
    public static let matchBudget: Duration = .seconds(60)

    /// `match` within `budget` for all of it (`MusicServerError.tooSlow` past it).
    public static func match(_ playlist: AlbumPlaylist, in library: some MusicLibrary,
                             within budget: Duration) async throws(MusicServerError) -> ServerPlaylist {
        let seconds = Int(budget.components.seconds)
        // The match's own outcome inside; the deadline's failure outside.
        let result = await Deadline.within(budget, server: library.server) { () async -> Result<Result<ServerPlaylist, MusicServerError>, MusicServerError> in
            do throws(MusicServerError) { return .success(.success(try await match(playlist, in: library))) } catch { return .success(.failure(error)) }
        }
        switch result {
        case .success(let matched): return try matched.get()
        case .failure: throw .tooSlow(library.server, albums: playlist.albums.count, seconds: seconds)
        }
    }

    /// Saves what `match` found on `library`, where it was matched; nothing
    /// when no album was found.
    public func save(on library: some MusicLibrary) async throws(MusicServerError) -> ServerPlaylist {
        guard saved else { return self }
        let replaced = try await library.savePlaylist(name: name, songs: songs)
        return ServerPlaylist(name: name, songs: songs, found: found, missing: missing, replaced: replaced)
    }

    /// How many albums are looked for at once (a server's threads, or mpd's connections).
    static let lookups = 6

    /// Matches `playlist` to `library`, saving nothing (`replaced` false).
    /// Albums are looked for a few at a time; the playlist keeps the
    /// chart's order.
    public static func match(_ playlist: AlbumPlaylist, in library: some MusicLibrary) async throws(MusicServerError) -> ServerPlaylist {
        let albums = playlist.albums
        let outcome = await withTaskGroup(of: (Int, Result<[LibrarySong]?, MusicServerError>).self) { group -> Result<[[LibrarySong]?], MusicServerError> in
            var found = [[LibrarySong]?](repeating: nil, count: albums.count)
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask {
                    do throws(MusicServerError) { return (index, .success(try await Self.albumSongs(of: albums[index], in: library))) } catch { return (index, .failure(error)) }
                }
            }
            for _ in 0..<min(lookups, albums.count) { start() }
            while let (index, result) = await group.next() {
                switch result {
                case .success(let songs): found[index] = songs
                case .failure(let error):
                    group.cancelAll()
                    return .failure(error)
                }
                if next < albums.count { start() }
            }
            return .success(found)
        }
        let each = try outcome.get()
        var songs: [LibrarySong] = []
        var found: [AlbumPlaylist.Album] = [], missing: [AlbumPlaylist.Album] = []
        for (album, albumSongs) in zip(albums, each) {
            if let albumSongs {
                songs += albumSongs
                found.append(album)
            } else {
                missing.append(album)
            }
        }
        return ServerPlaylist(name: playlist.title, songs: songs, found: found, missing: missing, replaced: false)
    }

    /// `album`'s songs in `library` (those played, by title, else all of
    /// them), or nil when the library does not hold it.
    static func albumSongs(of album: AlbumPlaylist.Album, in library: some MusicLibrary) async throws(MusicServerError) -> [LibrarySong]? {
        let folding = AlbumFolding.editions
        let key = folding.folded(.album, artist: album.artist, name: album.name).key
        let candidates = try await library.albums(named: searchQuery(album.name)).filter {
            folding.folded(.album, artist: $0.artist, name: $0.name).key == key
        }
        guard let chosen = candidates.first(where: { $0.name.caseInsensitiveCompare(album.name) == .orderedSame }) ?? candidates.first else {
            return nil
        }
        let all = try await library.songs(of: chosen)
        guard !all.isEmpty else { return nil }
        let played = Set(album.tracks.map { AlbumIdentity.comparable($0.title) })
        let chosenSongs = all.filter { played.contains(AlbumIdentity.comparable($0.title)) }
        return chosenSongs.isEmpty ? all : chosenSongs
    }

    /// The songs as an M3U8 file (UTF-8, extended), each song's library
    /// name (an mpd path, relative to its music directory) as its
    /// location: what mpd loads as a stored playlist.
    public var m3u8: String {
        var text = "#EXTM3U\n#PLAYLIST:\(Self.line(name))\n"
        for song in songs {
            text += "#EXTINF:-1,\(Self.line(song.artist)) - \(Self.line(song.title))\n\(Self.line(song.id))\n"
        }
        return text
    }

    /// `text` on one line (a line break would start another entry).
    static func line(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
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
