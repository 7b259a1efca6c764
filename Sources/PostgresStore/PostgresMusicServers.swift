import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `MusicServerSettings` in PostgreSQL (table `music_server`).
public struct PostgresMusicServers: MusicServerSettings {
    let database: PostgresDatabase
    var logger: Logger { database.logger }

    public init(_ database: PostgresDatabase) { self.database = database }

    static let table = """
        CREATE TABLE music_server (
            owner BIGINT PRIMARY KEY,
            kind TEXT NOT NULL,
            address TEXT NOT NULL,
            username TEXT,
            password TEXT,
            updated_at DOUBLE PRECISION NOT NULL
        )
        """

    public func musicServer(of owner: ListOwner) async throws -> MusicServerSetting? {
        let rows = try await database.client.query("SELECT kind, address, username, password FROM music_server WHERE owner = \(owner.id)",
                                                   logger: logger)
        for try await (kind, address, username, password) in rows.decode((String, String, String?, String?).self) {
            guard let kind = MusicServerSetting.Kind(rawValue: kind) else { return nil }
            return MusicServerSetting(kind: kind, address: address, username: username, password: password)
        }
        return nil
    }

    public func setMusicServer(_ setting: MusicServerSetting, of owner: ListOwner, at now: Date) async throws {
        try await database.client.query("""
            INSERT INTO music_server(owner, kind, address, username, password, updated_at)
            VALUES (\(owner.id), \(setting.kind.rawValue), \(setting.address), \(setting.username), \(setting.password), \(now.timeIntervalSince1970))
            ON CONFLICT (owner) DO UPDATE SET kind = EXCLUDED.kind, address = EXCLUDED.address, username = EXCLUDED.username,
                password = EXCLUDED.password, updated_at = EXCLUDED.updated_at
            """, logger: logger)
    }

    public func forgetMusicServer(of owner: ListOwner) async throws {
        try await database.client.query("DELETE FROM music_server WHERE owner = \(owner.id)", logger: logger)
    }
}
