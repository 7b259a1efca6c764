import Foundation
import GRDB
import Stores
import VinylogueCore

/// `MusicServerSettings` in SQLite (table `music_server`), with the weekly
/// playlist kept there (its columns `keep_years`, `kept_week`, `noted_at`, `note`).
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
        migrator.registerMigration("kept playlists") { db in
            try db.execute(sql: """
                ALTER TABLE music_server ADD COLUMN keep_years INTEGER;
                ALTER TABLE music_server ADD COLUMN kept_week INTEGER;
                ALTER TABLE music_server ADD COLUMN noted_at REAL;
                ALTER TABLE music_server ADD COLUMN note TEXT;
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
        try await writer.write { db in
            try Self.deleteJob(of: owner, in: db)
            try db.execute(sql: "DELETE FROM music_server WHERE owner = ?", arguments: [owner.id])
        }
    }

    // MARK: KeptPlaylists

    static let keptColumns = "owner, keep_years, kept_week, noted_at, note"

    static func kept(_ row: Row) -> KeptPlaylist? {
        guard let years: Int = row["keep_years"] else { return nil }
        return KeptPlaylist(owner: ListOwner(id: row["owner"]), yearsAgo: years, week: row["kept_week"],
                            notedAt: (row["noted_at"] as Double?).map(Date.init(timeIntervalSince1970:)), note: row["note"])
    }

    /// Deletes `owner`'s weekly playlist job, running or not: a run under
    /// way finds no claim at its next write.
    static func deleteJob(of owner: ListOwner, in db: Database) throws {
        try db.execute(sql: "DELETE FROM job WHERE kind = ? AND key = ?", arguments: [JobKind.weeklyPlaylist.rawValue, String(owner.id)])
    }

    public func keptPlaylist(of owner: ListOwner) async throws -> KeptPlaylist? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.keptColumns) FROM music_server WHERE owner = ?", arguments: [owner.id]).flatMap(Self.kept)
        }
    }

    public func keptPlaylists() async throws -> [KeptPlaylist] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.keptColumns) FROM music_server WHERE keep_years IS NOT NULL ORDER BY owner").compactMap(Self.kept)
        }
    }

    public func keepPlaylist(yearsAgo: Int?, of owner: ListOwner, at now: Date) async throws -> Bool {
        try await writer.write { db in
            // A change of years makes it again at once: the week is forgotten.
            try db.execute(sql: """
                UPDATE music_server SET keep_years = ?, kept_week = NULL, noted_at = NULL, note = NULL, updated_at = ? WHERE owner = ?
                """, arguments: [yearsAgo, now.timeIntervalSince1970, owner.id])
            guard db.changesCount == 1 else { return false }
            if yearsAgo == nil { try Self.deleteJob(of: owner, in: db) }
            return true
        }
    }

    public func queueKeptPlaylist(of owner: ListOwner, week: Int64, at now: Date) async throws -> Bool {
        try await writer.write { db in
            // Nothing is queued for an account erased meanwhile.
            guard let person = try SQLiteDigestStore.person(of: owner, in: db) else { return false }
            try db.execute(sql: """
                UPDATE music_server SET kept_week = ? WHERE owner = ? AND keep_years IS NOT NULL AND kept_week IS NOT ?
                """, arguments: [week, owner.id, week])
            guard db.changesCount == 1 else { return false }
            _ = try SQLiteJobQueue.enqueue(.weeklyPlaylist, personKey: person, key: String(owner.id), payload: String(week), machine: nil,
                                           notBefore: nil, at: now, in: db)
            return true
        }
    }

    public func begin(_ claim: JobClaim) async throws -> (server: MusicServerSetting, kept: KeptPlaylist)? {
        try await writer.read { db in
            guard try SQLiteJobQueue.holds(claim, in: db), let owner = Int64(claim.job.key),
                  let row = try Row.fetchOne(db, sql: """
                      SELECT kind, address, username, password, \(Self.keptColumns) FROM music_server WHERE owner = ?
                      """, arguments: [owner]),
                  let kind = MusicServerSetting.Kind(rawValue: row["kind"]), let kept = Self.kept(row) else { return nil }
            return (MusicServerSetting(kind: kind, address: row["address"], username: row["username"], password: row["password"]), kept)
        }
    }

    public func note(_ note: String, of claim: JobClaim, at now: Date) async throws -> Bool {
        try await writer.write { db in
            guard try SQLiteJobQueue.holds(claim, in: db), let owner = Int64(claim.job.key) else { return false }
            try db.execute(sql: "UPDATE music_server SET noted_at = ?, note = ? WHERE owner = ? AND keep_years IS NOT NULL",
                           arguments: [now.timeIntervalSince1970, note, owner])
            return true
        }
    }
}
