import Foundation
import SQLiteStore
import Testing

/// The data directory holds people's sessions, tokens and music servers'
/// passwords: one Vinylogue makes is for its own user only (a probe found
/// it readable by everyone, as the umask left it).
@Suite struct DataDirectoryTests {
    @Test func aDataDirectoryVinylogueMakesIsItsUsersAlone() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-perm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("data")
        _ = try ArchiveDatabase(directory: directory)
        let permissions = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700)
    }

    /// In a directory someone else made (readable by all), the database
    /// Vinylogue makes, and the journal files SQLite gives its mode, are
    /// still its user's alone.
    @Test func theDatabaseItMakesIsItsUsersAloneInAnyDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-perm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let database = try ArchiveDatabase(directory: directory)
        try database.writer.write { db in try db.execute(sql: "CREATE TABLE probe_write(x)") }
        for name in ["vinylogue.sqlite", "vinylogue.sqlite-wal", "vinylogue.sqlite-shm"] {
            let path = directory.appendingPathComponent(name).path
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(permissions == 0o600, "\(name): \(String(permissions ?? 0, radix: 8))")
        }
        // Opened again, the one there is kept (never made anew).
        _ = try ArchiveDatabase(directory: directory)
        #expect(try ArchiveDatabase(directory: directory).writer.read { db in try db.tableExists("probe_write") })
    }
}
