import Foundation
import Stores
import GRDB
import VinylogueCore

/// Remembered album covers in the data directory's SQLite database (an
/// `AlbumCoverStore`): table `album_cover`, one row per `AlbumKey`, whose
/// `address` is the cover's `/art/` path or NULL for "no cover".
///
/// Every call awaits GRDB's own queues (`read` / `write` from async code),
/// never blocking one of Swift's cooperative threads.
public struct SQLiteAlbumCoverStore: AlbumCoverStore {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    public func answers(for albums: [AlbumKey]) async throws(SourceError) -> [AlbumKey: CoverAnswer] {
        guard !albums.isEmpty else { return [:] }
        do {
            return try await writer.read { db in
                let statement = try db.cachedStatement(sql: "SELECT address FROM album_cover WHERE artist_key = ? AND album_key = ?")
                var found: [AlbumKey: CoverAnswer] = [:]
                for key in Set(albums) {
                    // One row: a NULL address is "no cover"; no row is "never asked".
                    guard let row = try Row.fetchOne(statement, arguments: [key.artist, key.album]) else { continue }
                    let path: String? = row[0]
                    if let path {
                        if let address = ArtworkAddress(localPath: path) { found[key] = .cover(address) }
                    } else {
                        found[key] = .noCover
                    }
                }
                return found
            }
        } catch {
            throw ArchiveDatabase.failure(error)
        }
    }

    public func remember(_ answer: CoverAnswer, artist: String, name: String, at instant: Date) async throws(SourceError) {
        let key = AlbumKey(artist: artist, album: name)
        do {
            try await writer.write { db in
                try db.execute(sql: """
                    INSERT INTO album_cover(artist_key, album_key, artist, album, address, resolved_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(artist_key, album_key) DO UPDATE SET address = excluded.address, resolved_at = excluded.resolved_at
                    """, arguments: [key.artist, key.album, artist, name, answer.address?.localPath, Int64(instant.timeIntervalSince1970)])
            }
        } catch {
            throw ArchiveDatabase.failure(error)
        }
    }

    public func archivedAlbums(of user: Username) async throws(SourceError) -> [ArchivedAlbum] {
        do {
            return try await writer.read { db in
                guard let id = try SQLiteScrobbleStore.userID(of: user, in: db) else { return [] }
                // Counted per exact spelling by SQLite, merged by key in Swift.
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT coalesce(album_artist, artist), album, max(album_mbid), count(*) FROM scrobble
                    WHERE user_id = ? AND album <> '' GROUP BY coalesce(album_artist, artist), album
                    """, arguments: [id])
                var tally = ArchivedAlbumTally()
                while let row = try rows.next() {
                    tally.add(artist: row[0], name: row[1], mbid: row[2], plays: row[3])
                }
                return tally.albums
            }
        } catch {
            throw ArchiveDatabase.failure(error)
        }
    }

    /// "album covers v1": remembered covers, keyed by album (not by person:
    /// a cover is the same for everyone).
    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("album covers v1") { db in
            try db.execute(sql: """
                CREATE TABLE album_cover (
                    artist_key TEXT NOT NULL,
                    album_key TEXT NOT NULL,
                    artist TEXT NOT NULL,
                    album TEXT NOT NULL,
                    address TEXT,
                    resolved_at INTEGER NOT NULL,
                    PRIMARY KEY (artist_key, album_key)) WITHOUT ROWID
                """)
        }
    }
}
