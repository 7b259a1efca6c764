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
}
