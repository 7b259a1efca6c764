import Artwork
import Foundation
import VinylogueCore
import Logging
import PostgresNIO

/// Album palettes in PostgreSQL (`PaletteStore`): one row per image
/// address, written by the first instance that decodes the cover, read by
/// every other. A palette of an older `version` (the colour extraction has
/// changed since) counts as none.
public struct PostgresPaletteStore: PaletteStore {
    let database: PostgresDatabase

    /// Bump when `ColourExtraction` changes, so palettes are computed again.
    public static let version: Int32 = 2

    public init(_ database: PostgresDatabase) { self.database = database }

    public func palette(for address: ArtworkAddress) async -> AlbumColours? {
        let logger = database.logger
        do {
            let rows = try await database.client.query("""
                SELECT colours FROM album_palette WHERE address = \(address.localPath) AND version = \(Self.version)
                """, logger: logger)
            for try await json in rows.decode(String.self) {
                return try? JSONDecoder().decode(AlbumColours.self, from: Data(json.utf8))
            }
        } catch {
            logger.debug("palette read failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        return nil
    }

    public func store(_ palette: AlbumColours, for address: ArtworkAddress) async {
        let logger = database.logger
        guard let json = try? String(decoding: JSONEncoder().encode(palette), as: UTF8.self) else { return }
        do {
            try await database.client.query("""
                INSERT INTO album_palette (address, version, colours) VALUES (\(address.localPath), \(Self.version), \(json))
                ON CONFLICT (address) DO UPDATE SET version = EXCLUDED.version, colours = EXCLUDED.colours
                """, logger: logger)
        } catch {
            logger.debug("palette write failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
