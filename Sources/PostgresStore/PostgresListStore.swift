import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `ListStore` in PostgreSQL. Each change is one transaction holding an
/// advisory lock on its owner, so concurrent changes to one list (from any
/// instance) apply one after another and positions stay dense; different
/// owners never wait for each other.
public struct PostgresListStore: ListStore {
    let database: PostgresDatabase
    public let owner: ListOwner

    public init(_ database: PostgresDatabase, owner: ListOwner = .household) {
        self.database = database
        self.owner = owner
    }

    public func owned(by owner: ListOwner) -> PostgresListStore { PostgresListStore(database, owner: owner) }

    var logger: Logger { database.logger }

    /// The advisory lock key for this owner's list.
    var lockKey: Int64 { 0x4C49_5354_0000_0000 ^ owner.id }

    func changing<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = self.logger, key = lockKey
        return try await database.client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(key))", logger: logger)
            return try await body(connection)
        }
    }

    func entries(_ connection: PostgresConnection) async throws -> [ListedUser] {
        var all: [ListedUser] = []
        let rows = try await connection.query(
            "SELECT key, name, position, is_me FROM list_entry WHERE owner = \(owner.id) ORDER BY position, key", logger: logger)
        for try await (key, name, position, isMe) in rows.decode((String, String, Int64, Bool).self) {
            all.append(ListedUser(owner: owner.id, key: key, name: name, position: Int(position), isMe: isMe))
        }
        return all
    }

    func renumber(_ keys: [String], _ connection: PostgresConnection) async throws {
        for (position, key) in keys.enumerated() {
            try await connection.query(
                "UPDATE list_entry SET position = \(Int64(position)) WHERE owner = \(owner.id) AND key = \(key)", logger: logger)
        }
    }

    public func users() async throws -> [ListedUser] {
        try await database.client.withConnection { connection in try await entries(connection) }
    }

    public func user(_ name: Username) async throws -> ListedUser? {
        try await users().first { $0.key == name.key }
    }

    public func isListedByAnyone(_ name: Username) async throws -> Bool {
        let rows = try await database.client.query("SELECT 1 FROM list_entry WHERE key = \(name.key) LIMIT 1", logger: logger)
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    @discardableResult
    public func add(_ name: Username) async throws -> Bool {
        try await changing { connection in try await add(name, connection) }
    }

    func add(_ name: Username, _ connection: PostgresConnection) async throws -> Bool {
        let existing = try await entries(connection)
        if existing.contains(where: { $0.key == name.key }) { return false }
        try await connection.query("""
            INSERT INTO list_entry(owner, key, name, position, is_me)
            VALUES (\(owner.id), \(name.key), \(name.value), \(Int64(existing.count)), \(existing.isEmpty))
            """, logger: logger)
        return true
    }

    public func addAll(_ names: [Username]) async throws -> [Username] {
        try await changing { connection in
            var added: [Username] = []
            for name in names where try await add(name, connection) { added.append(name) }
            return added
        }
    }

    public func remove(_ name: Username) async throws {
        try await changing { connection in
            let before = try await entries(connection)
            guard let removed = before.first(where: { $0.key == name.key }) else { return }
            try await connection.query("DELETE FROM list_entry WHERE owner = \(owner.id) AND key = \(name.key)", logger: logger)
            let rest = before.filter { $0.key != name.key }
            if removed.isMe, let first = rest.first {
                try await connection.query("UPDATE list_entry SET is_me = true WHERE owner = \(owner.id) AND key = \(first.key)", logger: logger)
            }
            try await renumber(rest.map(\.key), connection)
        }
    }

    public func move(_ name: Username, by offset: Int) async throws {
        try await changing { connection in
            var keys = try await entries(connection).map(\.key)
            guard let index = keys.firstIndex(of: name.key) else { return }
            keys.swapAt(index, min(max(0, index + offset), keys.count - 1))
            try await renumber(keys, connection)
        }
    }

    public func reorder(_ order: [Username]) async throws {
        try await changing { connection in
            let existing = try await entries(connection).map(\.key)
            var seen = Set<String>()
            var keys = order.map(\.key).filter { existing.contains($0) && seen.insert($0).inserted }
            keys += existing.filter { !seen.contains($0) }
            try await renumber(keys, connection)
        }
    }

    public func rename(_ old: Username, to new: Username) async throws -> Bool {
        try await changing { connection in
            let existing = try await entries(connection)
            guard existing.contains(where: { $0.key == old.key }) else { return false }
            if new.key != old.key, existing.contains(where: { $0.key == new.key }) { return false }
            try await connection.query("""
                UPDATE list_entry SET key = \(new.key), name = \(new.value) WHERE owner = \(owner.id) AND key = \(old.key)
                """, logger: logger)
            return true
        }
    }

    public func setMe(_ name: Username) async throws {
        try await changing { connection in
            guard try await entries(connection).contains(where: { $0.key == name.key }) else { return }
            try await connection.query("UPDATE list_entry SET is_me = (key = \(name.key)) WHERE owner = \(owner.id)", logger: logger)
        }
    }

    public func settings() async throws -> Settings {
        var values: [String: String] = [:]
        let rows = try await database.client.query("SELECT key, value FROM owner_setting WHERE owner = \(owner.id)", logger: logger)
        for try await (key, value) in rows.decode((String, String).self) { values[key] = value }
        return Settings(filter: PlayCountFilter(threshold: values["playCountFilter"].flatMap(Int.init) ?? 0),
                        timeZoneIdentifier: values["timeZone"])
    }

    public func save(_ settings: Settings) async throws {
        try await changing { connection in
            try await connection.query("""
                INSERT INTO owner_setting(owner, key, value) VALUES (\(owner.id), 'playCountFilter', \(String(settings.filter.threshold)))
                ON CONFLICT (owner, key) DO UPDATE SET value = EXCLUDED.value
                """, logger: logger)
            if let zone = settings.timeZoneIdentifier {
                try await connection.query("""
                    INSERT INTO owner_setting(owner, key, value) VALUES (\(owner.id), 'timeZone', \(zone))
                    ON CONFLICT (owner, key) DO UPDATE SET value = EXCLUDED.value
                    """, logger: logger)
            } else {
                try await connection.query("DELETE FROM owner_setting WHERE owner = \(owner.id) AND key = 'timeZone'", logger: logger)
            }
        }
    }
}
