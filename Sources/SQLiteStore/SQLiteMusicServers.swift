import Foundation
import GRDB
import Stores
import VinylogueCore

/// `MusicServerSettings` in SQLite (table `music_server`).
public struct SQLiteMusicServers: MusicServerSettings {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("music servers") { db in
            try db.execute(sql: """
                CREATE TABLE music_server (
                    owner INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL,
                    address TEXT NOT NULL,
                    username TEXT,
                    password TEXT,
                    updated_at REAL NOT NULL
                )
                """)
        }
    }

    public func musicServer(of owner: ListOwner) async throws -> MusicServerSetting? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT kind, address, username, password FROM music_server WHERE owner = ?",
                                             arguments: [owner.id]),
                  let kind = MusicServerSetting.Kind(rawValue: row["kind"]) else { return nil }
            return MusicServerSetting(kind: kind, address: row["address"], username: row["username"], password: row["password"])
        }
    }

    public func setMusicServer(_ setting: MusicServerSetting, of owner: ListOwner, at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO music_server(owner, kind, address, username, password, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(owner) DO UPDATE SET kind = excluded.kind, address = excluded.address, username = excluded.username,
                    password = excluded.password, updated_at = excluded.updated_at
                """, arguments: [owner.id, setting.kind.rawValue, setting.address, setting.username, setting.password, now.timeIntervalSince1970])
        }
    }

    public func forgetMusicServer(of owner: ListOwner) async throws {
        try await writer.write { db in try db.execute(sql: "DELETE FROM music_server WHERE owner = ?", arguments: [owner.id]) }
    }
}
