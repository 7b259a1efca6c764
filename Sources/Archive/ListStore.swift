import Foundation
import GRDB
import VinylogueCore

/// One person on the web app's users list.
public struct ListedUser: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "listed_user"

    /// The case-folded name: the primary key.
    public var key: String
    /// Last.fm's canonical spelling.
    public var name: String
    /// Place in the person's own order, from 0.
    public var position: Int
    /// Whether this is the person running the app ("me").
    public var isMe: Bool

    public var username: Username { (try? Username(name)) ?? Username(validating: key)! }
}

/// The app's settings.
public struct Settings: Sendable, Hashable {
    public var filter: PlayCountFilter
    /// An IANA time zone name; `nil` means the server's own zone.
    public var timeZoneIdentifier: String?

    public init(filter: PlayCountFilter = .off, timeZoneIdentifier: String? = nil) {
        self.filter = filter
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    public var timeZone: TimeZone {
        timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) ?? .current
    }
}

/// The users list, its order, and the settings, in SQLite.
///
/// Every change is one transaction; positions are renumbered densely after
/// each change so the order is always 0, 1, 2, ….
public struct ListStore: Sendable {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v1-listed-users-and-settings") { db in
            try db.create(table: "listed_user") { t in
                t.primaryKey("key", .text)
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("isMe", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "setting") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
    }

    // MARK: Users

    /// Everyone, in the person's order.
    public func users() async throws -> [ListedUser] {
        try await writer.read { db in try ListedUser.order(Column("position")).fetchAll(db) }
    }

    public func user(_ name: Username) async throws -> ListedUser? {
        try await writer.read { db in try ListedUser.fetchOne(db, key: name.key) }
    }

    /// Adds `name` at the end (as "me" when the list is empty). Returns false
    /// when the user is already listed.
    @discardableResult
    public func add(_ name: Username) async throws -> Bool {
        try await writer.write { db in try Self.add(name, db) }
    }

    static func add(_ name: Username, _ db: Database) throws -> Bool {
        if try ListedUser.fetchOne(db, key: name.key) != nil { return false }
        let count = try ListedUser.fetchCount(db)
        try ListedUser(key: name.key, name: name.value, position: count, isMe: count == 0).insert(db)
        return true
    }

    /// Adds every name not already listed, in the given order, after the
    /// existing users. Returns the names added.
    public func addAll(_ names: [Username]) async throws -> [Username] {
        try await writer.write { db in
            try names.filter { try Self.add($0, db) }
        }
    }

    public func remove(_ name: Username) async throws {
        try await writer.write { db in
            let removed = try ListedUser.fetchOne(db, key: name.key)
            _ = try ListedUser.deleteOne(db, key: name.key)
            if removed?.isMe == true, var first = try ListedUser.order(Column("position")).fetchOne(db) {
                first.isMe = true
                try first.update(db)
            }
            try Self.renumber(try ListedUser.order(Column("position")).fetchAll(db).map(\.key), db)
        }
    }

    /// Moves `name` up (-1) or down (+1) one place.
    public func move(_ name: Username, by offset: Int) async throws {
        try await writer.write { db in
            var keys = try ListedUser.order(Column("position")).fetchAll(db).map(\.key)
            guard let index = keys.firstIndex(of: name.key) else { return }
            let target = min(max(0, index + offset), keys.count - 1)
            keys.swapAt(index, target)
            try Self.renumber(keys, db)
        }
    }

    /// Puts the users in `order` (keys); anyone missing keeps their relative
    /// place after those named.
    public func reorder(_ order: [Username]) async throws {
        try await writer.write { db in
            let existing = try ListedUser.order(Column("position")).fetchAll(db).map(\.key)
            var seen = Set<String>()
            var keys = order.map(\.key).filter { existing.contains($0) && seen.insert($0).inserted }
            keys += existing.filter { !seen.contains($0) }
            try Self.renumber(keys, db)
        }
    }

    /// Replaces `old` by `new` in the same place (a corrected spelling).
    /// Returns false when `new` is already listed as someone else.
    public func rename(_ old: Username, to new: Username) async throws -> Bool {
        try await writer.write { db in
            guard var user = try ListedUser.fetchOne(db, key: old.key) else { return false }
            if new.key != old.key, try ListedUser.fetchOne(db, key: new.key) != nil { return false }
            _ = try ListedUser.deleteOne(db, key: old.key)
            user.key = new.key
            user.name = new.value
            try user.insert(db)
            return true
        }
    }

    /// Marks `name` as "me".
    public func setMe(_ name: Username) async throws {
        try await writer.write { db in
            guard try ListedUser.fetchOne(db, key: name.key) != nil else { return }
            try ListedUser.updateAll(db, Column("isMe").set(to: false))
            try ListedUser.filter(key: name.key).updateAll(db, Column("isMe").set(to: true))
        }
    }

    static func renumber(_ keys: [String], _ db: Database) throws {
        for (position, key) in keys.enumerated() {
            try ListedUser.filter(key: key).updateAll(db, Column("position").set(to: position))
        }
    }

    // MARK: Settings

    public func settings() async throws -> Settings {
        try await writer.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM setting")
            var values: [String: String] = [:]
            for row in rows { values[row["key"]] = row["value"] }
            return Settings(filter: PlayCountFilter(threshold: values["playCountFilter"].flatMap(Int.init) ?? 0),
                            timeZoneIdentifier: values["timeZone"])
        }
    }

    public func save(_ settings: Settings) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO setting(key, value) VALUES ('playCountFilter', ?)", arguments: [String(settings.filter.threshold)])
            if let zone = settings.timeZoneIdentifier {
                try db.execute(sql: "INSERT OR REPLACE INTO setting(key, value) VALUES ('timeZone', ?)", arguments: [zone])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = 'timeZone'")
            }
        }
    }
}
