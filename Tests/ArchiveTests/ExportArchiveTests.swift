import Foundation
import Testing
import TestSupport
import VinylogueCore
import ZIPFoundation
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// ZIP archives as ListenBrainz and Spotify deliver them, built here with
/// ZIPFoundation, and hostile ones.
@Suite struct ExportArchiveTests {
    /// ListenBrainz's export: `user.json`, `feedback.jsonl`, `listens/YYYY/M.jsonl`.
    func listenBrainzZIP(in dir: borrowing TemporaryDirectory, name: String = "listenbrainz_alice_1700000000.zip") throws -> URL {
        let url = dir.url.appendingPathComponent(name)
        try makeZIP(at: url, [
            ("user.json", #"{"user_id": 1, "user_name": "alice"}"#),
            ("feedback.jsonl", #"{"recording_msid": "x", "score": 1, "created": 1580495100}"# + "\n"),
            ("listens/2020/10.jsonl", listenLine(1_602_000_000, "Björk", "Jóga") + "\n"),
            ("listens/2020/1.jsonl", [listenLine(1_580_495_100, "Portishead", "Sour Times"),
                                      listenLine(1_580_495_400, "Portishead", "Roads"),
                                      #"{"listened_at": 1580495700, "track_metadata": {"artist_name": "Portishead"}}"#].joined(separator: "\n")),
            ("listens/2020/2.jsonl", listenLine(1_581_000_000, "Massive Attack", "Angel") + "\n"),
        ])
        return url
    }

    @Test func aListenBrainzZIPImportsMemberByMember() async throws {
        let dir = try TemporaryDirectory()
        let zip = try listenBrainzZIP(in: dir)
        let store = try dir.store()
        var progress: [ImportProgress] = []
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: zip.path, for: alice) { progress.append($0) }
        #expect(summary.isCollection)
        #expect(summary.imported == 4)
        #expect(summary.members.map(\.name) == ["feedback.jsonl", "listens/2020/1.jsonl", "listens/2020/2.jsonl", "listens/2020/10.jsonl", "user.json"])
        #expect(summary.members.map(\.imported) == [0, 2, 1, 1, 0])
        #expect(summary.members[0].outcome == .skipped("ListenBrainz loved and hated tracks, not listening history"))
        #expect(summary.members[1].outcome == .read(.listenBrainzJSONLines))
        #expect(summary.members[4].outcome == .skipped("ListenBrainz account details, not listening history"))
        #expect(summary.rejected.map(\.description) == ["listens/2020/1.jsonl, line 3: missing track_metadata.track_name"])
        // Progress covers the whole archive and names the member being read.
        #expect(progress.last?.bytesRead == progress.last?.totalBytes)
        #expect(progress.contains { $0.member == "listens/2020/10.jsonl" })

        // Importing the same archive again adds nothing.
        let again = try ScrobbleImporter(store: store, clock: testClock).importFile(at: zip.path, for: alice)
        #expect(again.imported == 0 && again.duplicates == 4)
        #expect(try await store.scrobbleCount(of: alice) == 4)
    }

    /// `my_spotify_data.zip` with the extended streaming history, a video file and the ReadMe.
    @Test func aSpotifyExtendedHistoryZIP() async throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("my_spotify_data.zip")
        let folder = "Spotify Extended Streaming History/"
        try makeZIP(at: zip, [
            (folder + "ReadMe.pdf", "%PDF-1.4 not really"),
            (folder + "Streaming_History_Audio_2019-2020_0.json", "[\n" + [
                spotifyEntry(ending: "2020-01-31T18:28:21Z", ms: 201_000, "Portishead", "Glory Box"),
                spotifyEntry(ending: "2020-01-31T18:29:00Z", ms: 12_000, "Portishead", "Wandering Star"),
                spotifyEntry(ending: "2020-01-31T19:30:00Z", ms: 1_800_000, nil, nil),
            ].joined(separator: ",\n") + "\n]"),
            (folder + "Streaming_History_Audio_2020_1.json", "[" + spotifyEntry(ending: "2020-03-01T10:00:00Z", ms: 240_000, "Tricky", "Overcome") + "]"),
            (folder + "Streaming_History_Video_2020.json", "[" + spotifyEntry(ending: "2020-03-01T11:00:00Z", ms: 240_000, "A", "Video") + "]"),
        ])
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: zip.path, for: alice)
        #expect(summary.imported == 2)
        #expect(summary.members.map(\.outcome) == [
            .skipped("a document, not listening history"), .read(.spotifyJSON), .read(.spotifyJSON), .skipped("Spotify video history, not music"),
        ])
        #expect(summary.members[1].skipped == ["plays shorter than 30 seconds": 1, "entries without a track (podcasts)": 1])
        #expect(try await store.scrobbles(of: alice, from: 0, to: .max).map(\.track) == ["Glory Box", "Overcome"])
    }

    /// Spotify's account data ZIP: `StreamingHistory_music_0.json` beside files that are not history.
    @Test func aSpotifyAccountDataZIP() throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("my_spotify_data.zip")
        try makeZIP(at: zip, [
            ("Spotify Account Data/Userdata.json", "{\n  \"username\": \"alice\"\n}"),
            ("Spotify Account Data/StreamingHistory_music_0.json",
             #"[{"endTime": "2020-01-31 18:28", "artistName": "Portishead", "trackName": "Glory Box", "msPlayed": 201000}]"#),
            ("Spotify Account Data/StreamingHistory_podcast_0.json",
             #"[{"endTime": "2020-01-31 19:28", "podcastName": "A Show", "episodeName": "One", "msPlayed": 2010000}]"#),
        ], compression: .none)
        let summary = try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: zip.path, for: alice)
        #expect(summary.imported == 1)
        #expect(summary.members.map(\.outcome) == [.read(.spotifyAccountJSON), .skipped("Spotify podcast history, not music"),
                                                  .skipped(MemberSummary.notRecognised)])
        #expect(summary.notes.count == 1)
    }

    /// One damaged member is refused whole; the others still import.
    @Test func aCorruptMemberIsReportedAndTheRestImports() async throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("export.zip")
        let middle = (0..<400).map { listenLine(1_590_000_000 + Int64($0) * 300, "Artist \($0 % 7)", "Track \($0)") }.joined(separator: "\n")
        try makeZIP(at: zip, [
            ("listens/2020/1.jsonl", listenLine(1_580_495_100, "A", "First") + "\n"),
            ("listens/2020/5.jsonl", middle),
            ("listens/2020/9.jsonl", listenLine(1_599_000_000, "C", "Last") + "\n"),
        ])
        // Damage the middle member's compressed bytes, past its local header.
        var bytes = try Data(contentsOf: zip)
        let name = Data("listens/2020/5.jsonl".utf8)
        let header = try #require(bytes.range(of: name)).upperBound
        for offset in stride(from: header + 200, to: header + 260, by: 3) { bytes[offset] ^= 0x5A }
        try bytes.write(to: zip)

        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: zip.path, for: alice)
        #expect(summary.imported == 2)
        #expect(summary.refused.map(\.name) == ["listens/2020/5.jsonl"])
        guard case .refused(let reason) = summary.members[1].outcome else { Issue.record("not refused"); return }
        #expect(reason.contains("damaged") && reason.contains("download the export again"))
        #expect(try await store.scrobbles(of: alice, from: 0, to: .max).map(\.track) == ["First", "Last"])
    }

    /// A member that inflates past the limit is refused, whether its header
    /// says so or lies about its size; the inflated bytes are counted as
    /// they come out, in 1 MiB pieces, and never held.
    @Test func aZIPBombIsRefused() throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("bomb.zip")
        let zeros = String(repeating: "0", count: 24 << 20)
        try makeZIP(at: zip, [("listens/2020/1.jsonl", listenLine(1_580_495_100, "A", "Fine") + "\n"), ("listens/2020/2.jsonl", zeros)])
        var importer = ScrobbleImporter(store: try dir.store(), clock: testClock)
        importer.maxMemberBytes = 4 << 20
        let honest = try importer.importFile(at: zip.path, for: alice)
        #expect(honest.imported == 1)
        guard case .refused(let said) = try #require(honest.refused.first).outcome else { Issue.record("not refused"); return }
        #expect(said.contains("ZIP bomb"))

        // The same archive with both headers claiming 100 bytes.
        var bytes = try Data(contentsOf: zip)
        let name = Data("listens/2020/2.jsonl".utf8)
        var searchFrom = bytes.startIndex
        var patched = 0
        while let found = bytes.range(of: name, in: searchFrom..<bytes.endIndex) {
            // Local header: size at +22 from "PK\3\4"; central: at +24 from "PK\1\2".
            let local = found.lowerBound - 30, central = found.lowerBound - 46
            if bytes[local..<(local + 4)] == Data([0x50, 0x4B, 0x03, 0x04]) {
                bytes.replaceSubrange((local + 22)..<(local + 26), with: [100, 0, 0, 0]); patched += 1
            } else if bytes[central..<(central + 4)] == Data([0x50, 0x4B, 0x01, 0x02]) {
                bytes.replaceSubrange((central + 24)..<(central + 28), with: [100, 0, 0, 0]); patched += 1
            }
            searchFrom = found.upperBound
        }
        #expect(patched == 2)
        try bytes.write(to: zip)
        let lying = try importer.importFile(at: zip.path, for: alice)
        #expect(lying.duplicates == 1 && lying.imported == 0)
        guard case .refused(let counted) = try #require(lying.refused.first).outcome else { Issue.record("not refused"); return }
        #expect(counted.contains("inflates to more than 4 MiB"))
    }

    /// A member named `../../x.jsonl` is only a label: members are streamed
    /// from memory, nothing is ever written to disk.
    @Test func aMemberPathOutsideTheArchiveWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let inner = dir.url.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        let zip = inner.appendingPathComponent("evil.zip")
        try makeZIP(at: zip, [("../../x.jsonl", listenLine(1_580_495_100, "A", "Escaped") + "\n"),
                              ("/tmp/vinylogue-absolute-\(UUID().uuidString).jsonl", listenLine(1_580_495_400, "A", "Absolute") + "\n")])
        let before = try FileManager.default.subpathsOfDirectory(atPath: dir.url.path).sorted()
        let summary = try ScrobbleImporter(store: try dir.store("data-\(UUID().uuidString)"), clock: testClock)
            .importFile(at: zip.path, for: alice)
        #expect(summary.imported == 2)
        #expect(summary.members.map(\.name).contains("../../x.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("x.jsonl").path))
        #expect(!FileManager.default.fileExists(atPath: inner.appendingPathComponent("../../x.jsonl").standardizedFileURL.path))
        let after = try FileManager.default.subpathsOfDirectory(atPath: dir.url.path).filter { !$0.hasPrefix("data-") }.sorted()
        #expect(after == before)
    }

    /// In a directory, a cut-off ZIP is named as refused and the rest imports.
    @Test func aBrokenZIPInADirectoryIsNamedAndTheRestImports() throws {
        let dir = try TemporaryDirectory()
        let folder = dir.url.appendingPathComponent("exports")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let good = try listenBrainzZIP(in: dir, name: "exports/good.zip")
        let cut = folder.appendingPathComponent("cut.zip")
        let bytes = try Data(contentsOf: good)
        try bytes.prefix(bytes.count / 2).write(to: cut)
        let summary = try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: folder.path, for: alice)
        #expect(summary.imported == 4)
        #expect(summary.refused.map(\.name) == ["cut.zip"])
        #expect(summary.members.contains { $0.name == "good.zip/listens/2020/10.jsonl" && $0.imported == 1 })
    }

    /// A deflate stream that never ends (a valid listen, sync-flushed, then
    /// a stored block longer than the rest of the file) is refused; it must
    /// not leave the reader waiting at the end of the file for ever.
    @Test func aDeflateStreamThatNeverEndsIsRefused() async throws {
        let dir = try TemporaryDirectory()
        let zip = dir.url.appendingPathComponent("endless.zip")
        // Raw deflate of one listen line (zlib, Z_SYNC_FLUSH), then `00 FFFF 0000`.
        let stream: [UInt8] = [
            0xAA, 0x56, 0xCA, 0xC9, 0x2C, 0x2E, 0x49, 0xCD, 0x4B, 0x4D, 0x89, 0x4F, 0x2C, 0x51, 0xB2, 0x52, 0x30, 0x34, 0xB5, 0x30,
            0x30, 0xB1, 0x34, 0x35, 0x34, 0x30, 0xD0, 0x51, 0x50, 0x2A, 0x29, 0x4A, 0x4C, 0xCE, 0x8E, 0xCF, 0x4D, 0x2D, 0x49, 0x4C,
            0x49, 0x2C, 0x49, 0x04, 0xCA, 0x56, 0x2B, 0x25, 0x16, 0x95, 0x00, 0xD5, 0xC7, 0xE7, 0x25, 0xE6, 0xA6, 0x02, 0xF9, 0x4A,
            0x8E, 0x4A, 0x70, 0x65, 0x30, 0x21, 0x27, 0xA5, 0xDA, 0x5A, 0x2E, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF,
            0x00, 0x00,
        ]
        try makeZIP(at: zip, [("listens/2020/1.jsonl", Data(stream))], compression: .none)
        // Written stored (the bytes as they are), then marked deflated in both headers.
        var bytes = try Data(contentsOf: zip)
        #expect(bytes.range(of: Data(stream)) != nil)
        for (signature, offset) in [([UInt8]([0x50, 0x4B, 0x03, 0x04]), 8), ([0x50, 0x4B, 0x01, 0x02], 10)] {
            let at = try #require(bytes.range(of: Data(signature))).lowerBound
            bytes[at + offset] = 8
        }
        try bytes.write(to: zip)
        let store = try dir.store()
        let path = zip.path
        // On a thread of its own, awaited: a hang fails the test by the time limit instead of blocking the pool.
        let summary = try await DedicatedThread.run(named: "endless-zip") {
            try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        }
        #expect(summary.imported == 0)
        #expect(summary.refused.map(\.name) == ["listens/2020/1.jsonl"])
    }

    /// A ZIP whose table of contents is cut off says so with a next step.
    @Test func aTruncatedZIPSaysWhatToDo() throws {
        let dir = try TemporaryDirectory()
        let zip = try listenBrainzZIP(in: dir)
        let bytes = try Data(contentsOf: zip)
        try bytes.prefix(bytes.count / 2).write(to: zip)
        #expect {
            try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: zip.path, for: alice)
        } throws: { error in
            guard case .unreadableFile(_, let reason) = error as? SourceError else { return false }
            return reason.contains("download the export again")
        }
    }
}
