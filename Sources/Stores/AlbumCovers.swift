import Foundation
import VinylogueCore

/// Album covers found once and remembered: the remembered answer when
/// there is one, else Last.fm's (`album.getInfo` by MusicBrainz id when
/// known, else by artist and album name, through the given `AlbumSource`
/// and so its rate limit), which is then remembered, "no cover" included.
///
/// A failure of the moment (Last.fm unreachable, rate limiting, a bad key)
/// is thrown and never remembered, so the next attempt asks again.
public struct AlbumCovers: Sendable {
    public let store: any AlbumCoverStore
    let albums: any AlbumSource
    let clock: WallClock

    public init(store: any AlbumCoverStore, albums: any AlbumSource, clock: WallClock) {
        self.store = store
        self.albums = albums
        self.clock = clock
    }

    /// The remembered answer for the album, else Last.fm's, remembered.
    public func answer(artist: String, name: String, mbid: String?) async throws(SourceError) -> CoverAnswer {
        if let known = try await store.answer(artist: artist, name: name) { return known }
        return try await resolve(artist: artist, name: name, mbid: mbid)
    }

    /// Asks Last.fm about the album's cover and remembers the answer.
    /// "Album not found" is an answer too: no cover.
    public func resolve(artist: String, name: String, mbid: String?) async throws(SourceError) -> CoverAnswer {
        let answer: CoverAnswer
        do {
            let detail = try await albums.album(artist: artist, name: name, mbid: mbid, user: nil)
            answer = ArtworkAddress(coverOf: detail).map(CoverAnswer.cover) ?? .noCover
        } catch .notFound {
            answer = .noCover
        }
        try await store.remember(answer, artist: artist, name: name, at: clock.now)
        return answer
    }
}
