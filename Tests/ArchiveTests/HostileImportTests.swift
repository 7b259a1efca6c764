import Foundation
import GRDB
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// Imports of files made to break things: absurd times, lines longer than
/// any export has, byte-order marks, the wrong kind of path, a full disk.
@Suite struct HostileImportTests {
    /// The instants `testClock` accepts run to this second.
    static let latestAccepted: Int64 = 1_794_000_000 + 86_400

    @Test func implausibleTimesAreRejectedWithTheirLineInEveryFormat() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let importer = ScrobbleImporter(store: store, clock: testClock)

        let csv = try dir.file("export.csv", [
            csvHeader,
            "9223372036854775807,x,A,,B,,D,",
            "1000000000000000000,x,A,,B,,D,",
            "1009843199,x,A,,B,,Just before 2002,",
            "1009843200,x,A,,B,,First second of 2002,",
            "\(Self.latestAccepted),x,A,,B,,A day ahead,",
            "\(Self.latestAccepted + 1),x,A,,B,,A day and a second ahead,",
        ].joined(separator: "\n"))
        let fromCSV = try importer.importFile(at: csv, for: alice)
        #expect(fromCSV.imported == 2)
        #expect(fromCSV.rejected.map(\.line) == [2, 3, 4, 7])
        #expect(fromCSV.rejected[0].reason == "time 9223372036854775807 is more than a day in the future")
        #expect(fromCSV.rejected[2].reason == "time 1009843199 is before 2002-01-01, when scrobbling began")

        let headerless = try dir.file("old.csv", "A,B,Year one,01 Jan 0001 00:00\nA,B,Year 9999,31 Dec 9999 23:59\nA,B,2001,31 Dec 2001 23:59\n")
        let fromHeaderless = try importer.importFile(at: headerless, for: alice)
        #expect(fromHeaderless.imported == 0 && fromHeaderless.rejected.map(\.line) == [1, 2, 3])
        #expect(fromHeaderless.rejected[1].reason.contains("future") && fromHeaderless.rejected[2].reason.contains("before 2002"))

        let listens = try dir.file("listens.jsonl", #"""
            {"listened_at": 99999999999999999999999, "track_metadata": {"artist_name": "A", "track_name": "Huge"}}
            {"listened_at": 1, "track_metadata": {"artist_name": "A", "track_name": "1970"}}
            {"listened_at": "0001-01-01T00:00:00Z", "track_metadata": {"artist_name": "A", "track_name": "Year one"}}
            {"listened_at": "9999-12-31T00:00:00Z", "track_metadata": {"artist_name": "A", "track_name": "Year 9999"}}
            {"listened_at": 1580495100, "track_metadata": {"artist_name": "A", "track_name": "Fine"}}
            """#)
        let fromListens = try importer.importFile(at: listens, for: alice)
        #expect(fromListens.imported == 1 && fromListens.rejected.map(\.line) == [1, 2, 3, 4])
        #expect(fromListens.rejected[0].reason.contains("listened_at"))

        let spotify = try dir.file("Streaming_History_Audio_2020.json", #"""
            [{"ts": "2020-01-31T18:28:21Z", "ms_played": 9223372036854775807, "master_metadata_track_name": "Forever",
              "master_metadata_album_artist_name": "A", "master_metadata_album_album_name": "B"},
             {"ts": "9999-01-31T18:28:21Z", "ms_played": 200000, "master_metadata_track_name": "Later",
              "master_metadata_album_artist_name": "A", "master_metadata_album_album_name": "B"},
             {"ts": "2020-01-31T18:28:21Z", "ms_played": 200000, "master_metadata_track_name": "Fine",
              "master_metadata_album_artist_name": "A", "master_metadata_album_album_name": "B"}]
            """#)
        let fromSpotify = try importer.importFile(at: spotify, for: alice)
        // Its one good play starts a second after the ListenBrainz listen of
        // the same track: the same listen, stored once.
        #expect(fromSpotify.imported == 0 && fromSpotify.duplicates == 1 && fromSpotify.rejected.map(\.line) == [1, 3])

        let stored = try await store.scrobbles(of: alice, from: .min, to: .max)
        #expect(stored.map(\.track).sorted() == ["A day ahead", "Fine", "First second of 2002"])
        #expect(stored.allSatisfy { PlausibleTime.archived.contains($0.instant) })
    }

    /// Rows written before imports checked times (here: straight into
    /// SQLite) are left out of the user's weeks instead of trapping on
    /// overflow or listing every week until the year 292 billion.
    @Test func damagedRowsNeverStretchOrBreakTheChartList() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let bomb = try Username("bomb")
        let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
        try await store.store([Scrobble(instant: week.from + 60, artist: "A", album: "B", track: "C"),
                               Scrobble(instant: week.from - 364 * 86_400 + 60, artist: "A", album: "Older", track: "C")],
                              of: bomb, origin: .lastFMExport)
        try await store.database.writer.write { db in
            let id = try #require(try SQLiteScrobbleStore.userID(of: bomb, in: db))
            for instant in [Int64.max, 1_000_000_000_000_000_000, 200_376_420_520_689_663, -5, Int64.min] {
                try db.execute(sql: "INSERT INTO scrobble (user_id, instant, artist, track, album, source) VALUES (?, ?, 'A', 'D', 'B', 2)",
                               arguments: [id, instant])
            }
        }
        #expect(try await store.scrobbleCount(of: bomb) == 7)

        let source = ArchiveChartSource(store: store)
        let list = try await source.chartList(for: bomb)
        #expect(list.earliest == LastFMWeekCalendar.week(containing: week.from - 364 * 86_400 + 60))
        #expect(list.latest == week)
        let chart = try await source.chart(for: bomb, kind: .album, week: week)
        #expect(chart.entries.map(\.name) == ["B"])
        let now = Date(timeIntervalSince1970: TimeInterval(week.from + (6 * 365 + 3) * 86_400))  // 2026-07-07
        let years = try await source.everyYear(for: bomb, now: now, timeZone: .gmt)
        #expect(years.years.map(\.yearsAgo) == [6, 7])
    }

    @Test func overlongLinesAreRejectedWholeNotSpliced() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let importer = ScrobbleImporter(store: store, clock: testClock)
        let huge = String(repeating: "x", count: LineSplitter.maxLineLength + 100)

        let csv = try dir.file("long.csv", [
            csvHeader,
            "1580495100,x,Before,,B,,T,",
            "1580495200,x,\(huge),,B,,T,",
            "1580495300,x,After,,B,,T,",
        ].joined(separator: "\n") + "\n")
        let fromCSV = try importer.importFile(at: csv, for: alice)
        #expect(fromCSV.imported == 2)
        #expect(fromCSV.rejected.map(\.line) == [3])
        #expect(fromCSV.rejected[0].reason.contains("16 MiB") && fromCSV.rejected[0].reason.count < 200)

        // The long line is the last one, with no newline after it.
        let lines = try dir.file("long.jsonl", #"{"listened_at": 1580495400, "track_metadata": {"artist_name": "Fine", "track_name": "T"}}"#
            + "\n" + #"{"listened_at": 1580495500, "track_metadata": {"artist_name": ""# + huge + #"", "track_name": "T"}}"#)
        let fromLines = try importer.importFile(at: lines, for: alice)
        #expect(fromLines.imported == 1 && fromLines.rejected.map(\.line) == [2])

        let array = try dir.file("long.json", #"[{"listened_at": 1580495600, "track_metadata": {"artist_name": "Fine", "track_name": "U"}},"#
            + "\n" + #"{"listened_at": 1580495700, "track_metadata": {"artist_name": ""# + huge + #"", "track_name": "T"}},"#
            + "\n" + #"{"listened_at": 1580495800, "track_metadata": {"artist_name": "Also fine", "track_name": "U"}}]"#)
        let fromArray = try importer.importFile(at: array, for: alice)
        #expect(fromArray.imported == 2 && fromArray.rejected.map(\.line) == [2])
        #expect(fromArray.rejected[0].reason.contains("16 MiB"))

        let artists = try await store.scrobbles(of: alice, from: .min, to: .max).map(\.artist)
        #expect(artists.sorted() == ["After", "Also fine", "Before", "Fine", "Fine"])
    }

    @Test func aRejectionNamesABadValueWithoutEchoingIt() throws {
        let dir = try TemporaryDirectory()
        let date = String(repeating: "7", count: 2_000_000)
        // The first line shows it is a Last.fm CSV (nothing is read as CSV by default).
        let path = try dir.file("bad.csv", "Artist,Album,Track,31 Jan 2020 18:25\nArtist,Album,Track,\(date)\n")
        let summary = try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: path, for: alice)
        #expect(summary.rejected.count == 1 && summary.rejected[0].line == 2)
        #expect(summary.rejected[0].reason.hasPrefix("invalid date “7777"))
        #expect(summary.rejected[0].reason.count < 100)
    }

    @Test func byteOrderMarksAreSkippedInEveryFormat() async throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let importer = ScrobbleImporter(store: store, clock: testClock)
        let bom = "\u{FEFF}"
        let files = [
            "with-header.csv": bom + csvHeader + "\n1580495100,x,Radiohead,,OK Computer,,Airbag,\n",
            "no-header.csv": bom + "Radiohead,OK Computer,Paranoid Android,31 Jan 2020 18:30\n",
            "listens.json": bom + #"[{"listened_at": 1580495400, "track_metadata": {"artist_name": "Radiohead", "track_name": "Subterranean"}}]"#,
            "listens.jsonl": bom + #"{"listened_at": 1580495500, "track_metadata": {"artist_name": "Radiohead", "track_name": "Exit Music"}}"# + "\n",
            "Streaming_History_Audio_2020.json": bom + #"[{"ts": "2020-01-31T18:40:00Z", "ms_played": 200000, "#
                + #""master_metadata_track_name": "Let Down", "master_metadata_album_artist_name": "Radiohead"}]"#,
        ]
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            let summary = try importer.importFile(at: try dir.file(name, text), for: alice)
            #expect(summary.imported == 1 && summary.rejectedCount == 0, "\(name): \(summary.rejected)")
        }
        let stored = try await store.scrobbles(of: alice, from: .min, to: .max)
        #expect(stored.count == 5)
        #expect(stored.allSatisfy { $0.artist == "Radiohead" })
    }

    /// A directory is imported file by file (`MoreFormatTests`); one with
    /// no files in it says so.
    @Test func anEmptyDirectoryIsSaidToHoldNoExports() throws {
        let dir = try TemporaryDirectory()
        let empty = dir.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect {
            try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: empty.path, for: alice)
        } throws: { error in
            guard case .unreadableFile(_, let reason) = error as? SourceError else { return false }
            let sourceError = error as! SourceError
            return reason.contains("directory with no export files") && !sourceError.description.contains("--data-dir")
        }
    }

    /// SQLite's page limit stands in for a full disk: the same SQLITE_FULL.
    @Test func aFullDiskIsSaidToBeFull() throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        try store.database.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)")
        }
        var text = csvHeader + "\n"
        for i in 0..<5_000 { text += "\(1_580_000_000 + i * 60),x,Artist \(i),,Album,,Track \(i),\n" }
        let path = try dir.file("export.csv", text)
        #expect {
            try ScrobbleImporter(store: store, clock: testClock, batchSize: 1_000).importFile(at: path, for: alice)
        } throws: { error in
            guard let error = error as? SourceError, case .diskFull = error else { return false }
            return error.message.contains("full")
        }
    }

    /// Several openers of one new data directory at once: each must find
    /// the schema made (by whoever came first), never fail half-way.
    @Test func concurrentOpenersOfANewDirectoryAllSucceed() throws {
        let dir = try TemporaryDirectory()
        let failures = Mutex<[String]>([])
        for round in 0..<25 {
            let directory = dir.url.appendingPathComponent("round-\(round)")
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                do {
                    let database = try ArchiveDatabase(directory: directory)
                    _ = try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM scrobble") }
                } catch {
                    failures.withLock { $0.append("round \(round): \(error)") }
                }
            }
        }
        let seen = failures.withLock { $0 }
        #expect(seen.isEmpty, "\(seen.count) failed: \(seen.prefix(3))")
    }

    /// Issue 38: a ZIP of 20,000 empty members kept a 720 KB summary, which
    /// Settings showed on every load. The summary names the first few and
    /// counts the rest.
    @Test func aZIPOfTwentyThousandEmptyMembersHasASummaryOfBoundedSize() throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("many.zip")
        try Self.emptyMembersZIP(count: 20_000, longName: String(repeating: "n", count: 5_000)).write(to: zip)
        let summary = try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: zip.path, for: alice)
        #expect(summary.members.count == 20_000)
        let report = summary.report(for: alice) { $0 }
        #expect(report.utf8.count < 8_192, "\(report.utf8.count) bytes")
        #expect(report.contains("Read 20,000 files"), "\(report.prefix(500))")
        #expect(report.contains("member-00001.txt") && !report.contains("member-19999.txt"))
        #expect(report.contains("… and 19,990 more files: 19,990 skipped"), "\(report)")
        #expect(report.contains("Imported 0 scrobbles"))
    }

    /// A ZIP archive of `count` empty members (stored), written byte by
    /// byte: ZIPFoundation rewrites its directory on each member added.
    /// The first member's name is `longName` when given.
    static func emptyMembersZIP(count: Int, longName: String? = nil) -> Data {
        var local = Data(), central = Data()
        func le16(_ value: Int, into data: inout Data) { data.append(contentsOf: [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)]) }
        func le32(_ value: Int, into data: inout Data) { for shift in [0, 8, 16, 24] { data.append(UInt8((value >> shift) & 0xFF)) } }
        for index in 0..<count {
            let text = (index == 0 ? longName : nil).map { "\($0).txt" } ?? String(format: "empty/member-%05d.txt", index)
            let name = Data(text.utf8).prefix(60_000)
            let offset = local.count
            le32(0x0403_4B50, into: &local)
            for value in [20, 0, 0, 0, 0x21] { le16(value, into: &local) }  // version, flags, stored, time, date
            for _ in 0..<3 { le32(0, into: &local) }  // CRC, sizes: empty
            le16(name.count, into: &local)
            le16(0, into: &local)
            local.append(name)
            le32(0x0201_4B50, into: &central)
            for value in [20, 20, 0, 0, 0, 0x21] { le16(value, into: &central) }
            for _ in 0..<3 { le32(0, into: &central) }
            for value in [name.count, 0, 0, 0, 0] { le16(value, into: &central) }
            le32(0, into: &central)
            le32(offset, into: &central)
            central.append(name)
        }
        var end = Data()
        le32(0x0605_4B50, into: &end)
        for value in [0, 0, count, count] { le16(value, into: &end) }
        le32(central.count, into: &end)
        le32(local.count, into: &end)
        le16(0, into: &end)
        return local + central + end
    }
}
