import Foundation
import Stores
import GRDB
import VinylogueCore

/// `ListStore` in SQLite.
///
/// Every change is one transaction; positions are renumbered densely after
/// each change so the order is always 0, 1, 2, …. A store sees only its
/// owner's rows: `owned(by:)` gives another owner's.
public struct SQLiteListStore: ListStore {
    let writer: any DatabaseWriter
    /// Whose list and settings this store reads and writes.
    public let owner: ListOwner

    public init(_ database: ArchiveDatabase, owner: ListOwner = .household) {
        writer = database.writer
        self.owner = owner
    }

    init(writer: any DatabaseWriter, owner: ListOwner) {
        self.writer = writer
        self.owner = owner
    }

    /// The same database, `owner`'s list and settings.
    public func owned(by owner: ListOwner) -> SQLiteListStore { SQLiteListStore(writer: writer, owner: owner) }

    /// This owner's entries.
    var entries: QueryInterfaceRequest<ListedUser> { ListedUser.filter(Column("owner") == owner.id) }

    func entry(_ key: String, _ db: Database) throws -> ListedUser? {
        try ListedUser.fetchOne(db, key: ["owner": owner.id, "key": key])
    }

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

    /// Lists and settings get an owner (the household's rows become owner
    /// 0's). Registered after every earlier migration of the database.
    static func registerOwnerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("lists-and-settings-by-owner") { db in
            try db.create(table: "list_entry") { t in
                t.column("owner", .integer).notNull()
                t.column("key", .text).notNull()
                t.column("name", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("isMe", .boolean).notNull().defaults(to: false)
                t.primaryKey(["owner", "key"])
            }
            try db.execute(sql: "INSERT INTO list_entry(owner, key, name, position, isMe) SELECT 0, key, name, position, isMe FROM listed_user")
            try db.drop(table: "listed_user")
            try db.create(table: "owner_setting") { t in
                t.column("owner", .integer).notNull()
                t.column("key", .text).notNull()
                t.column("value", .text).notNull()
                t.primaryKey(["owner", "key"])
            }
            try db.execute(sql: "INSERT INTO owner_setting(owner, key, value) SELECT 0, key, value FROM setting")
            try db.drop(table: "setting")
        }
    }

    // MARK: Users

    /// Everyone, in the person's order.
    public func users() async throws -> [ListedUser] {
        try await writer.read { db in try entries.order(Column("position")).fetchAll(db) }
    }

    public func user(_ name: Username) async throws -> ListedUser? {
        try await writer.read { db in try entry(name.key, db) }
    }

    public func isListedByAnyone(_ name: Username) async throws -> Bool {
        try await writer.read { db in try ListedUser.filter(Column("key") == name.key).fetchCount(db) > 0 }
    }

    /// Adds `name` at the end (as "me" when the list is empty). Returns false
    /// when the user is already listed.
    @discardableResult
    public func add(_ name: Username) async throws -> Bool {
        try await writer.write { db in try add(name, db) }
    }

    func add(_ name: Username, _ db: Database) throws -> Bool {
        if try entry(name.key, db) != nil { return false }
        let count = try entries.fetchCount(db)
        try ListedUser(owner: owner.id, key: name.key, name: name.value, position: count, isMe: count == 0).insert(db)
        return true
    }

    /// Adds every name not already listed, in the given order, after the
    /// existing users. Returns the names added.
    public func addAll(_ names: [Username]) async throws -> [Username] {
        try await writer.write { db in
            try names.filter { try add($0, db) }
        }
    }

    public func remove(_ name: Username) async throws {
        try await writer.write { db in
            let removed = try entry(name.key, db)
            try removed?.delete(db)
            if removed?.isMe == true, var first = try entries.order(Column("position")).fetchOne(db) {
                first.isMe = true
                try first.update(db)
            }
            try renumber(try entries.order(Column("position")).fetchAll(db).map(\.key), db)
        }
    }

    /// Moves `name` up (-1) or down (+1) one place.
    public func move(_ name: Username, by offset: Int) async throws {
        try await writer.write { db in
            var keys = try entries.order(Column("position")).fetchAll(db).map(\.key)
            guard let index = keys.firstIndex(of: name.key) else { return }
            let target = min(max(0, index + offset), keys.count - 1)
            keys.swapAt(index, target)
            try renumber(keys, db)
        }
    }

    /// Puts the users in `order` (keys); anyone missing keeps their relative
    /// place after those named.
    public func reorder(_ order: [Username]) async throws {
        try await writer.write { db in
            let existing = try entries.order(Column("position")).fetchAll(db).map(\.key)
            var seen = Set<String>()
            var keys = order.map(\.key).filter { existing.contains($0) && seen.insert($0).inserted }
            keys += existing.filter { !seen.contains($0) }
            try renumber(keys, db)
        }
    }

    /// Replaces `old` by `new` in the same place (a corrected spelling).
    /// Returns false when `new` is already listed as someone else.
    public func rename(_ old: Username, to new: Username) async throws -> Bool {
        try await writer.write { db in
            guard var user = try entry(old.key, db) else { return false }
            if new.key != old.key, try entry(new.key, db) != nil { return false }
            try user.delete(db)
            user.key = new.key
            user.name = new.value
            try user.insert(db)
            return true
        }
    }

    /// Marks `name` as "me".
    public func setMe(_ name: Username) async throws {
        try await writer.write { db in
            guard try entry(name.key, db) != nil else { return }
            try entries.updateAll(db, Column("isMe").set(to: false))
            try entries.filter(Column("key") == name.key).updateAll(db, Column("isMe").set(to: true))
        }
    }

    func renumber(_ keys: [String], _ db: Database) throws {
        for (position, key) in keys.enumerated() {
            try entries.filter(Column("key") == key).updateAll(db, Column("position").set(to: position))
        }
    }

    // MARK: Settings

    public func settings() async throws -> Settings {
        try await writer.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM owner_setting WHERE owner = ?", arguments: [owner.id])
            var values: [String: String] = [:]
            for row in rows { values[row["key"]] = row["value"] }
            return Settings(filter: PlayCountFilter(threshold: values["playCountFilter"].flatMap(Int.init) ?? 0),
                            timeZoneIdentifier: values["timeZone"])
        }
    }

    public func save(_ settings: Settings) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO owner_setting(owner, key, value) VALUES (?, 'playCountFilter', ?)",
                           arguments: [owner.id, String(settings.filter.threshold)])
            if let zone = settings.timeZoneIdentifier {
                try db.execute(sql: "INSERT OR REPLACE INTO owner_setting(owner, key, value) VALUES (?, 'timeZone', ?)", arguments: [owner.id, zone])
            } else {
                try db.execute(sql: "DELETE FROM owner_setting WHERE owner = ? AND key = 'timeZone'", arguments: [owner.id])
            }
        }
    }
}

extension ListedUser: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "list_entry"
}
