import Foundation
import GRDB
import Stores
import VinylogueCore

/// A consistent copy of a data directory, made while a server uses it.
///
/// The database is copied with SQLite's online backup API (through GRDB)
/// inside one read transaction of a connection of its own: it is the
/// database as it stood at one instant, every transaction committed by then
/// and none after, while the server goes on reading and writing (WAL mode:
/// the backup holds no lock a writer waits for). The other files of the
/// directory (the mobile sign-in key, kept album art and cards, uploads
/// waiting to be imported) are copied beside it; each of them is written
/// whole by its owner and renamed into place, so a copy never holds half
/// of one.
///
/// The copy goes into a fresh directory. The database is written under a
/// temporary name, synced, checked (`PRAGMA quick_check`) and only then
/// renamed to `vinylogue.sqlite`: a backup that stopped midway never looks
/// like a finished one. Restoring is starting `serve` on the copy (or
/// moving it where the old directory was).
public enum DataDirectoryBackup {
    /// What a finished backup holds.
    public struct Summary: Sendable, Equatable {
        /// The database file's size.
        public let databaseBytes: Int64
        /// The other files copied, and their bytes.
        public let files: Int
        public let fileBytes: Int64
        /// Scrobbles in the copy, and the people they are of.
        public let scrobbles: Int
        public let people: Int
    }

    /// Backs `source` up into `destination`, a directory that does not
    /// exist yet or is empty. Blocking: run it off Swift's cooperative pool.
    public static func backUp(_ source: URL, to destination: URL) throws(SourceError) -> Summary {
        let fm = FileManager.default
        guard ArchiveDatabase.exists(in: source) else {
            throw .storage(detail: "\(source.path) holds no Vinylogue database (\(ArchiveDatabase.fileName))")
        }
        // A copy inside the directory it copies would copy itself.
        if Self.path(of: destination, isWithin: source) {
            throw .storage(detail: "\(destination.path) is inside the data directory \(source.path); "
                + "a backup goes into a directory outside it (on another disk, ideally)")
        }
        if let entries = try? fm.contentsOfDirectory(atPath: destination.path), !entries.isEmpty {
            throw .storage(detail: "\(destination.path) is not empty; a backup goes into a new directory")
        }
        // What this backup makes, and only that, goes again if it fails.
        var made = destination.standardizedFileURL
        while !fm.fileExists(atPath: made.deletingLastPathComponent().path), made.pathComponents.count > 2 {
            made.deleteLastPathComponent()
        }
        let makes = !fm.fileExists(atPath: destination.path)
        do {
            try fm.createDirectory(at: destination, withIntermediateDirectories: true)
        } catch {
            throw StorageFailure.failure(error, path: destination.path)
        }
        do {
            return try copy(source, to: destination)
        } catch {
            if makes { try? fm.removeItem(at: made) }
            throw error
        }
    }

    /// Whether `path`, once symbolic links and `..` are resolved as far as
    /// they exist, is `directory` or lies within it.
    static func path(of path: URL, isWithin directory: URL) -> Bool {
        let inner = path.standardizedFileURL.resolvingSymlinksInPath().pathComponents
        let outer = directory.standardizedFileURL.resolvingSymlinksInPath().pathComponents
        return inner.count >= outer.count && Array(inner.prefix(outer.count)) == outer
    }

    /// Copies into `destination`, which exists and is empty.
    private static func copy(_ source: URL, to destination: URL) throws(SourceError) -> Summary {
        let fm = FileManager.default
        let skipped: Set<String> = [ArchiveDatabase.fileName, ArchiveDatabase.fileName + "-wal", ArchiveDatabase.fileName + "-shm"]
        var files = 0, fileBytes: Int64 = 0
        do {
            // The other files first: what the database names (uploads, kept
            // art) is then no newer than the database, at worst older.
            for name in try fm.contentsOfDirectory(atPath: source.path) where !skipped.contains(name) && !name.hasPrefix(".") {
                let (count, bytes) = try copyTree(source.appendingPathComponent(name), to: destination.appendingPathComponent(name))
                files += count
                fileBytes += bytes
            }
        } catch {
            throw StorageFailure.failure(error, path: destination.path)
        }

        let partial = destination.appendingPathComponent(".\(ArchiveDatabase.fileName).partial")
        let final = destination.appendingPathComponent(ArchiveDatabase.fileName)
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            let live = try DatabasePool(path: source.appendingPathComponent(ArchiveDatabase.fileName).path, configuration: configuration)
            // The copy holds what the database does (sessions, servers' passwords): its owner's alone.
            ArchiveDatabase.makeOwnersOnly(partial.path)
            let copy = try DatabaseQueue(path: partial.path)
            try live.backup(to: copy)
            let (scrobbles, people, check) = try copy.read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM scrobble") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT count(DISTINCT user_id) FROM scrobble") ?? 0,
                 try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "")
            }
            guard check == "ok" else {
                throw SourceError.storage(detail: "the copy failed SQLite's check (\(check)); \(source.path) is unchanged. Run the backup again")
            }
            try copy.close()
            try live.close()
            try sync(partial)
            try fm.moveItem(at: partial, to: final)
            try sync(destination)
            let bytes = (try fm.attributesOfItem(atPath: final.path)[.size] as? NSNumber)?.int64Value ?? 0
            return Summary(databaseBytes: bytes, files: files, fileBytes: fileBytes, scrobbles: scrobbles, people: people)
        } catch let error as SourceError {
            try? fm.removeItem(at: partial)
            throw error
        } catch {
            try? fm.removeItem(at: partial)
            throw ArchiveDatabase.failure(error, path: partial.path)
        }
    }

    /// Copies a file, or a directory and everything in it (hidden
    /// temporary files left out), syncing each file; returns the files
    /// copied and their bytes.
    static func copyTree(_ from: URL, to: URL) throws -> (Int, Int64) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: from.path, isDirectory: &isDirectory) else { return (0, 0) }
        if isDirectory.boolValue {
            try fm.createDirectory(at: to, withIntermediateDirectories: true)
            var count = 0, bytes: Int64 = 0
            for name in try fm.contentsOfDirectory(atPath: from.path) where !name.hasPrefix(".") {
                let (c, b) = try copyTree(from.appendingPathComponent(name), to: to.appendingPathComponent(name))
                count += c
                bytes += b
            }
            return (count, bytes)
        }
        do {
            try fm.copyItem(at: from, to: to)
        } catch CocoaError.fileReadNoSuchFile {
            // Removed since it was listed (an upload imported, art evicted).
            return (0, 0)
        }
        // The same permissions: the sign-in key is readable by its owner only.
        if let permissions = try fm.attributesOfItem(atPath: from.path)[.posixPermissions] {
            try fm.setAttributes([.posixPermissions: permissions], ofItemAtPath: to.path)
        }
        try sync(to)
        return (1, (try fm.attributesOfItem(atPath: to.path)[.size] as? NSNumber)?.int64Value ?? 0)
    }

    /// Makes `url` (a file, or a directory's entries) durable.
    static func sync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw CocoaError(.fileReadUnknown) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
