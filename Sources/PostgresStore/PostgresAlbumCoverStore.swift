import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// Remembered album covers in PostgreSQL (`AlbumCoverStore`): table
/// `album_cover`, one row per album key, shared by every instance, so an
/// album resolved by one (or by `vinylogue art fetch --database`) is never
/// asked about by another. `address` is the cover's `/art/` path, NULL for
/// "no cover".
public struct PostgresAlbumCoverStore: AlbumCoverStore {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    public func answers(for albums: [AlbumKey]) async throws(SourceError) -> [AlbumKey: CoverAnswer] {
        guard !albums.isEmpty else { return [:] }
        let keys = Array(Set(albums))
        let artists = keys.map(\.artist), names = keys.map(\.album)
        let logger = database.logger
        return try await PostgresScrobbleStore(database).mapped {
            // One query for the lot: the keys go as two arrays, joined back
            // into pairs by `unnest`.
            let rows = try await database.client.query("""
                SELECT c.artist_key, c.album_key, c.address FROM album_cover c
                JOIN unnest(\(artists)::text[], \(names)::text[]) AS k(artist_key, album_key)
                  ON c.artist_key = k.artist_key AND c.album_key = k.album_key
                """, logger: logger)
            var found: [AlbumKey: CoverAnswer] = [:]
            for try await (artist, album, path) in rows.decode((String, String, String?).self) {
                // The stored key is already lowercased: AlbumKey keeps it as it is.
                let key = AlbumKey(artist: artist, album: album)
                if let path {
                    if let address = ArtworkAddress(localPath: path) { found[key] = .cover(address) }
                } else {
                    found[key] = .noCover
                }
            }
            return found
        }
    }

    public func remember(_ answer: CoverAnswer, artist: String, name: String, at instant: Date) async throws(SourceError) {
        let key = AlbumKey(artist: artist, album: name)
        let address = answer.address?.localPath
        let logger = database.logger
        try await PostgresScrobbleStore(database).mapped {
            try await database.client.query("""
                INSERT INTO album_cover(artist_key, album_key, artist, album, address, resolved_at)
                VALUES (\(key.artist), \(key.album), \(artist), \(name), \(address), \(instant))
                ON CONFLICT (artist_key, album_key) DO UPDATE SET address = EXCLUDED.address, resolved_at = EXCLUDED.resolved_at
                """, logger: logger)
        }
    }

    public func archivedAlbums(of user: Username) async throws(SourceError) -> [ArchivedAlbum] {
        let logger = database.logger
        return try await PostgresScrobbleStore(database).mapped {
            // Counted per exact spelling by PostgreSQL, merged by key in Swift.
            let rows = try await database.client.query("""
                SELECT coalesce(s.album_artist, s.artist), s.album, max(s.album_mbid), count(*) FROM scrobble s
                JOIN archive_user u ON u.id = s.user_id
                WHERE u.name_key = \(user.key) AND s.album <> ''
                GROUP BY coalesce(s.album_artist, s.artist), s.album
                """, logger: logger)
            var tally = ArchivedAlbumTally()
            for try await (artist, album, mbid, plays) in rows.decode((String, String, String?, Int64).self) {
                tally.add(artist: artist, name: album, mbid: mbid, plays: Int(plays))
            }
            return tally.albums
        }
    }
}
