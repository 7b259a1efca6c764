import SQLiteStore
import Stores
import Sync
import Artwork
import Foundation
import LastFM
import PostgresStore
import VinylogueCore

extension Composition {
    /// At most this many albums are worked on at once by `art fetch`:
    /// enough for the rate limit to set the pace, few enough to be polite
    /// to the image host.
    static let coverFetchConcurrency = 8

    /// What `vinylogue art fetch` works with, built like the web app's:
    /// the remembered covers (PostgreSQL's when a database is configured,
    /// else the data directory's SQLite), the art store in the data
    /// directory (where `serve` looks), and a Last.fm client paced by the
    /// fleet's shared budget when there is a database, else by this
    /// process's `LASTFM_REQUESTS_PER_SECOND`.
    public func archiveCoverFetch(dataDir: String?) async throws -> ArchiveCoverFetch {
        let directory = dataDirectory(dataDir)
        let storage = try await openStorage(dataDir: dataDir)
        // Without the response cache: each album is asked once, and remembered.
        let client = LastFMClient(configuration: configuration.lastFM, transport: lastFMTransport, permits: storage.permits, clock: clock,
                                  logger: logger)
        let (store, palettes) = (storage.backend.albumCovers, storage.palettes)
        let artwork = ArtworkStore(dataDirectory: directory, upstream: imageUpstream, imageBase: configuration.imageBase,
                                   maxDiskBytes: configuration.artCacheBytes, clock: clock, palettes: palettes)
        return ArchiveCoverFetch(covers: AlbumCovers(store: store, albums: client, clock: clock), artwork: artwork,
                                 concurrency: min(configuration.lastFM.requestsPerSecond, Self.coverFetchConcurrency))
    }
}
