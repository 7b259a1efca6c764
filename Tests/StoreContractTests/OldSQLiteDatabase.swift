import Foundation
import GRDB
@testable import SQLiteStore

/// A SQLite data directory as an earlier release left it: migrated up to
/// `migration` and no further, holding the rows `fill` writes in that
/// schema; `body` opens it with every migration (the upgrade under test).
/// The directory is removed afterwards.
enum OldSQLiteDatabase {
    static func upgraded(from migration: String, in directory: URL? = nil,
                         filling fill: @escaping @Sendable (Database) throws -> Void,
                         _ body: (ArchiveDatabase) async throws -> Void) async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("old-sqlite-\(UUID().uuidString)")
        let data = directory ?? temporary
        defer { try? FileManager.default.removeItem(at: temporary) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        do {
            let queue = try DatabaseQueue(path: data.appendingPathComponent(ArchiveDatabase.fileName).path)
            try ArchiveDatabase.migrator(progress: nil).migrate(queue, upTo: migration)
            try await queue.write(fill)
        }
        try await body(try ArchiveDatabase(directory: data))
    }
}
