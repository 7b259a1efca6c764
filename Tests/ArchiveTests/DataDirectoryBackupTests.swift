import Foundation
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// `DataDirectoryBackup` copies a data directory while it is written to:
/// the copy is the database as it stood at one instant.
@Suite struct DataDirectoryBackupTests {
    static let alice = Username(validating: "alice")!
    static let bob = Username(validating: "bob")!

    /// An import and a stream of received listens go on while the backup
    /// is made. The copy opens, passes SQLite's check, holds every listen
    /// acknowledged before the backup started, and its kept weekly charts
    /// are a count of its own rows in every week: no half-written batch.
    @Test func aBackupMadeDuringAnImportAndListensIsConsistentAndHoldsEveryAcknowledgedListen() async throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data"), copy = dir.url.appendingPathComponent("backup")
        let database = try ArchiveDatabase(directory: data)
        let store = SQLiteScrobbleStore(database: database)
        let received = SQLiteReceivedListenStore(database)
        try Data("a key".utf8).write(to: data.appendingPathComponent("mobile-sign-in.key"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: data.appendingPathComponent("mobile-sign-in.key").path)

        let history = DemoHistory(seed: 21, start: 1_300_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: history.firstWeek.from + 104 * LastFMWeekCalendar.weekLength)
        let batches = weeks.map { history.scrobbles(in: $0) }.filter { !$0.isEmpty }
        // Some of the import and some listens are in before anything starts.
        for batch in batches.prefix(10) { _ = try await store.store(batch, of: Self.alice, origin: .lastFMExport) }
        let acknowledged = Mutex<[Int64]>([])
        func listen(_ n: Int64) -> ListenToForward {
            ListenToForward(scrobble: Scrobble(instant: 1_700_000_000 + n * 300, artist: "Low", album: "C'mon", track: "Try to Sleep \(n)"), duration: 200)
        }
        for n in 0..<20 as Range<Int64> {
            _ = try await received.keep([listen(n)], of: Self.bob, owner: .household, forwardingAmong: [], at: .now)
            acknowledged.withLock { $0.append(listen(n).scrobble.instant) }
        }

        // The stream ends two listens after the backup: the second of them
        // was sent after the backup had returned.
        let stopAt = Mutex<Int?>(nil)
        let importing = Task {
            for batch in batches.dropFirst(10) { _ = try await store.store(batch, of: Self.alice, origin: .lastFMExport) }
        }
        let listening = Task {
            var n: Int64 = 20
            while stopAt.withLock({ $0 }).map({ limit in acknowledged.withLock { $0.count } < limit }) ?? true {
                _ = try await received.keep([listen(n)], of: Self.bob, owner: .household, forwardingAmong: [], at: .now)
                acknowledged.withLock { $0.append(listen(n).scrobble.instant) }
                n += 1
            }
        }
        let before = acknowledged.withLock { $0 }
        let summary = try await DedicatedThread.run(named: "backup") { try DataDirectoryBackup.backUp(data, to: copy) }
        let afterBackup = acknowledged.withLock { $0.count }
        stopAt.withLock { $0 = afterBackup + 2 }
        try await listening.value
        try await importing.value

        let restored = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: copy))
        let listens = Set(try await restored.scrobbles(of: Self.bob, from: 0, to: .max).map(\.instant))
        #expect(before.allSatisfy(listens.contains), "\(before.count) acknowledged before, \(listens.count) in the copy")
        // The server went on writing: what it stored after is not in the copy.
        let late = acknowledged.withLock { $0[afterBackup + 1] }
        #expect(!listens.contains(late))
        #expect(try await store.scrobbles(of: Self.bob, from: late, to: late + 1).count == 1)
        #expect(summary.scrobbles == (try await restored.scrobbleCount(of: Self.alice)) + listens.count)
        #expect(summary.people == 2)
        #expect(summary.files == 1)
        #expect(try Data(contentsOf: copy.appendingPathComponent("mobile-sign-in.key")) == Data("a key".utf8))
        let permissions = try FileManager.default.attributesOfItem(atPath: copy.appendingPathComponent("mobile-sign-in.key").path)[.posixPermissions]
        #expect((permissions as? NSNumber)?.intValue == 0o600)
        #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent(".vinylogue.sqlite.partial").path))
        let source = ArchiveChartSource(store: restored)
        for week in weeks {
            let rows = try await restored.scrobbles(of: Self.alice, from: week.from, to: week.to)
            for kind in [ChartKind.album, .artist] {
                let chart = try await source.chart(for: Self.alice, kind: kind, week: week)
                #expect(chart == ScrobbleTally.chart(kind, user: Self.alice, week: week, scrobbles: rows), "\(kind) chart of \(week)")
            }
        }
    }

    /// A backup never goes over what is there, and needs a database to copy.
    @Test func aBackupNeedsADatabaseAndAnEmptyDestination() async throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data"), used = dir.url.appendingPathComponent("used")
        #expect(throws: SourceError.self) { try DataDirectoryBackup.backUp(data, to: used) }
        _ = try ArchiveDatabase(directory: data)
        try FileManager.default.createDirectory(at: used, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: used.appendingPathComponent("notes.txt"))
        #expect(throws: SourceError.storage(detail: "\(used.path) is not empty; a backup goes into a new directory")) {
            try DataDirectoryBackup.backUp(data, to: used)
        }
        #expect(try String(contentsOf: used.appendingPathComponent("notes.txt"), encoding: .utf8) == "keep me")
        // A directory no server has open (no -wal or -shm file) backs up too.
        let summary = try DataDirectoryBackup.backUp(data, to: dir.url.appendingPathComponent("fresh"))
        #expect(summary.scrobbles == 0)
    }

    /// A backup into the data directory itself would copy itself: it is
    /// refused with a sentence saying so, and leaves no folder behind (it
    /// said "The file name is invalid." and left the folder).
    @Test func aBackupInsideTheDataDirectoryIsRefusedAndLeavesNothing() throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data")
        _ = try ArchiveDatabase(directory: data)
        for inside in [data.appendingPathComponent("backups/today"), data, dir.url.appendingPathComponent("data/../data/b")] {
            #expect(throws: SourceError.storage(detail: "\(inside.path) is inside the data directory \(data.path); "
                + "a backup goes into a directory outside it (on another disk, ideally)")) {
                try DataDirectoryBackup.backUp(data, to: inside)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("backups").path))
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("b").path))
        // Beside it is fine.
        #expect(try DataDirectoryBackup.backUp(data, to: dir.url.appendingPathComponent("data-backup")).scrobbles == 0)
    }

    /// A person's album choices, their switch and the albums their listens
    /// tie by release are in the backup, and a server opening it (a
    /// restart on the restored directory) counts their charts as before.
    @Test func aBackupKeepsAlbumChoicesAndTies() async throws {
        let dir = try TemporaryDirectory()
        let data = dir.url.appendingPathComponent("data"), copy = dir.url.appendingPathComponent("backup")
        let store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: data))
        let start: Int64 = 1_700_000_000, release = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29", now = Date(timeIntervalSince1970: 1_790_000_000)
        let listens = [
            Scrobble(instant: start, artist: "Radiohead", album: "OK Computer", track: "Airbag", albumMBID: release),
            Scrobble(instant: start + 300, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Lucky", albumMBID: release),
            Scrobble(instant: start + 600, artist: "Vetiver", album: "Tidewater", track: "Wonder Why"),
            Scrobble(instant: start + 900, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "Fog Lights"),
            Scrobble(instant: start + 1_200, artist: "Low", album: "HEY WHAT", track: "White Horses"),
        ]
        _ = try await store.store(listens, of: Self.alice, origin: .lastFMExport)
        #expect(try await store.changeAlbums(.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)"), of: Self.alice, at: now))
        #expect(try await store.changeAlbums(.join(artist: "Low", album: "HEY WHAT", toArtist: "Vetiver", toAlbum: "Tidewater"), of: Self.alice,
                                             at: now.addingTimeInterval(1)))
        while try await store.countAgain(Self.alice, under: nil, at: now) {}
        let folding = try await store.albumFolding(of: Self.alice)
        #expect(folding.sameRelease.count == 1)
        let week = LastFMWeekCalendar.week(containing: start)
        let chart = try #require(try await store.charts(.album, of: Self.alice, weeks: [week])?.first)
        #expect(chart.entries.map(\.plays) == [2, 2, 1])

        _ = try DataDirectoryBackup.backUp(data, to: copy)
        // It holds people's sessions and servers' passwords: its owner's alone.
        let mode = try FileManager.default.attributesOfItem(atPath: copy.appendingPathComponent("vinylogue.sqlite").path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "\(String(mode ?? 0, radix: 8))")
        let restored = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: copy))
        #expect(try await restored.albumFolding(of: Self.alice) == folding)
        #expect(try await restored.albumChoices(of: Self.alice) == (try await store.albumChoices(of: Self.alice)))
        #expect(try await restored.charts(.album, of: Self.alice, weeks: [week])?.first == chart)
        // Writes on the restored copy count with them.
        _ = try await restored.store([Scrobble(instant: start + 1_500, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Karma Police")],
                                     of: Self.alice, origin: .received)
        #expect(try await restored.charts(.album, of: Self.alice, weeks: [week])?.first?.entries.map(\.plays) == [3, 2, 1])
    }
}
