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
        let store: any AlbumCoverStore
        var client = lastFM
        var palettes: (any PaletteStore)?
        if let postgres = try await migratedPostgres() {
            store = PostgresAlbumCoverStore(postgres)
            let permits = PostgresRequestPermits(postgres, limit: configuration.lastFM.requestsPerSecond)
            try await permits.prepare()
            client = LastFMClient(configuration: configuration.lastFM, transport: .live(httpClient), permits: permits, clock: clock,
                                  logger: logger)
            palettes = PostgresPaletteStore(postgres)
        } else {
            // Opening SQLite (and migrating it) blocks: on a thread of its own.
            let progress = migrationProgress
            let database = try await DedicatedThread.run(named: "vinylogue.covers") { try ArchiveDatabase(directory: directory, progress: progress) }
            store = SQLiteAlbumCoverStore(database)
        }
        let artwork = ArtworkStore(dataDirectory: directory, upstream: .live(httpClient), imageBase: configuration.imageBase,
                                   maxDiskBytes: configuration.artCacheBytes, clock: clock, palettes: palettes)
        return ArchiveCoverFetch(covers: AlbumCovers(store: store, albums: client, clock: clock), artwork: artwork,
                                 concurrency: min(configuration.lastFM.requestsPerSecond, Self.coverFetchConcurrency))
    }
}
