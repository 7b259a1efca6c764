import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `MusicServerSettings` in PostgreSQL (table `music_server`), with the
/// weekly playlist kept there (its columns `keep_years`, `kept_week`, `noted_at`, `note`).
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
        let logger = self.logger
        try await database.client.withTransaction(logger: logger) { connection in
            try await Self.deleteJob(of: owner, connection, logger)
            try await connection.query("DELETE FROM music_server WHERE owner = \(owner.id)", logger: logger)
        }
    }

    // MARK: KeptPlaylists

    static let keptColumnsAdded = """
        ALTER TABLE music_server ADD COLUMN keep_years INTEGER, ADD COLUMN kept_week BIGINT, ADD COLUMN noted_at DOUBLE PRECISION,
            ADD COLUMN note TEXT
        """

    static let keptColumns = "owner, keep_years, kept_week, noted_at, note"

    static func kept(_ rows: PostgresRowSequence) async throws -> [KeptPlaylist] {
        var kept: [KeptPlaylist] = []
        for try await (owner, years, week, notedAt, note) in rows.decode((Int64, Int32?, Int64?, Double?, String?).self) {
            guard let years else { continue }
            kept.append(KeptPlaylist(owner: ListOwner(id: owner), yearsAgo: Int(years), week: week,
                                     notedAt: notedAt.map(Date.init(timeIntervalSince1970:)), note: note))
        }
        return kept
    }

    /// Deletes `owner`'s weekly playlist job, running or not: a run under
    /// way finds no claim at its next write.
    static func deleteJob(of owner: ListOwner, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM job WHERE kind = \(JobKind.weeklyPlaylist.rawValue) AND key = \(String(owner.id))", logger: logger)
    }

    public func keptPlaylist(of owner: ListOwner) async throws -> KeptPlaylist? {
        try await Self.kept(database.client.query("SELECT \(unescaped: Self.keptColumns) FROM music_server WHERE owner = \(owner.id)",
                                                  logger: logger)).first
    }

    public func keptPlaylists() async throws -> [KeptPlaylist] {
        try await Self.kept(database.client.query("""
            SELECT \(unescaped: Self.keptColumns) FROM music_server WHERE keep_years IS NOT NULL ORDER BY owner
            """, logger: logger))
    }

    public func keepPlaylist(yearsAgo: Int?, of owner: ListOwner, at now: Date) async throws -> Bool {
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            // A change of years makes it again at once: the week is forgotten.
            let changed = try await PostgresHistoryCopyStore.changed(try await connection.query("""
                UPDATE music_server SET keep_years = \(yearsAgo.map(Int32.init)), kept_week = NULL, noted_at = NULL, note = NULL,
                    updated_at = \(now.timeIntervalSince1970)
                WHERE owner = \(owner.id) RETURNING 1
                """, logger: logger))
            if changed, yearsAgo == nil { try await Self.deleteJob(of: owner, connection, logger) }
            return changed
        }
    }

    public func queueKeptPlaylist(of owner: ListOwner, week: Int64, at now: Date) async throws -> Bool {
        let logger = self.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            // Nothing is queued for an account erased meanwhile.
            guard let person = try await PostgresDigestStore.person(of: owner, connection, logger) else { return false }
            // One instance of a fleet marks the week; the others find it marked.
            guard try await PostgresHistoryCopyStore.changed(try await connection.query("""
                UPDATE music_server SET kept_week = \(week)
                WHERE owner = \(owner.id) AND keep_years IS NOT NULL AND kept_week IS DISTINCT FROM \(week) RETURNING 1
                """, logger: logger)) else { return false }
            _ = try await PostgresJobQueue.enqueue(.weeklyPlaylist, personKey: person, key: String(owner.id), payload: String(week),
                                                   machine: nil, notBefore: nil, at: now, connection, logger)
            return true
        }
    }

    public func begin(_ claim: JobClaim) async throws -> (server: MusicServerSetting, kept: KeptPlaylist)? {
        let logger = self.logger
        guard let owner = Int64(claim.job.key) else { return nil }
        return try await database.client.withTransaction(logger: logger) { connection in
            guard try await PostgresJobQueue.holds(claim, connection, logger) else { return nil }
            let rows = try await connection.query("""
                SELECT kind, address, username, password, \(unescaped: Self.keptColumns) FROM music_server WHERE owner = \(owner)
                """, logger: logger)
            for try await (kind, address, username, password, id, years, week, notedAt, note)
                in rows.decode((String, String, String?, String?, Int64, Int32?, Int64?, Double?, String?).self) {
                guard let kind = MusicServerSetting.Kind(rawValue: kind), let years else { return nil }
                return (MusicServerSetting(kind: kind, address: address, username: username, password: password),
                        KeptPlaylist(owner: ListOwner(id: id), yearsAgo: Int(years), week: week,
                                     notedAt: notedAt.map(Date.init(timeIntervalSince1970:)), note: note))
            }
            return nil
        }
    }

    public func note(_ note: String, of claim: JobClaim, at now: Date) async throws -> Bool {
        let logger = self.logger
        guard let owner = Int64(claim.job.key) else { return false }
        return try await database.client.withTransaction(logger: logger) { connection in
            // The job's row first, locked: a deletion waits, or has won.
            guard try await PostgresJobQueue.holds(claim, connection, logger) else { return false }
            try await connection.query("""
                UPDATE music_server SET noted_at = \(now.timeIntervalSince1970), note = \(CopyText.withoutNUL(note))
                WHERE owner = \(owner) AND keep_years IS NOT NULL
                """, logger: logger)
            return true
        }
    }
}
