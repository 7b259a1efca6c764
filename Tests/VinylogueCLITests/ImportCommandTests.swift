import Foundation
import Testing
import ZIPFoundation

/// `vinylogue import` on exports exactly as people download them, run as the real binary.
@Suite struct ImportCommandTests {
    /// A temporary folder for one test.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-import-cli-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        var data: String { url.appendingPathComponent("data").path }

        func zip(_ name: String, _ members: [(String, String)]) throws -> String {
            let url = self.url.appendingPathComponent(name)
            let archive = try Archive(url: url, accessMode: .create)
            for (path, text) in members {
                let data = Data(text.utf8)
                try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                    data.subdata(in: Int(position)..<(Int(position) + size))
                }
            }
            return url.path
        }
    }

    static func listen(_ instant: Int, _ artist: String, _ track: String) -> String {
        #"{"listened_at": \#(instant), "track_metadata": {"artist_name": "\#(artist)", "release_name": "Dummy", "track_name": "\#(track)"}}"#
    }

    /// A downloaded ZIP names its own members and holds its own lines: a
    /// terminal's control sequences (or a NUL) in either are printed as
    /// visible escapes, never sent to the terminal as they are.
    @Test func controlCharactersInAnExportArePrintedVisibly() async throws {
        let folder = try Folder()
        let zip = try folder.zip("listenbrainz_mallory_1700000000.zip", [
            ("listens/2020/1\u{1B}]0;owned\u{07}\u{1B}[2J.jsonl", [Self.listen(1_580_495_100, "Portishead", "Sour Times"),
                                                               "{\"listened_at\": \"\u{1B}[31mred\u{0}\"}"].joined(separator: "\n")),
        ])
        let run = try await vinylogue(["import", zip, "--user", "mallory", "--data-dir", folder.data])
        #expect(run.status == 0, "\(run.stderr)")
        for output in [run.stdout, run.stderr] {
            #expect(!output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
                    "\(output.debugDescription)")
        }
        #expect(run.stdout.contains("listens/2020/1\\u{1B}]0;owned\\u{07}\\u{1B}[2J.jsonl"), "\(run.stdout)")
    }

    /// An empty member of a ZIP is listed as skipped, and is not also a
    /// rejected line (it was counted both ways).
    @Test func anEmptyMemberIsSkippedNotRejected() async throws {
        let folder = try Folder()
        let zip = try folder.zip("listenbrainz_ann_1700000000.zip", [
            ("listens/2020/1.jsonl", Self.listen(1_580_495_100, "Portishead", "Sour Times")),
            ("listens/2020/2.jsonl", ""),
        ])
        let run = try await vinylogue(["import", zip, "--user", "ann", "--data-dir", folder.data])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("listens/2020/2.jsonl  skipped: it is empty"), "\(run.stdout)")
        #expect(run.stdout.contains("Imported 1 scrobbles for ann; 0 duplicates skipped; 0 lines rejected."), "\(run.stdout)")
        #expect(!run.stdout.contains("rejected listens/2020/2.jsonl"), "\(run.stdout)")
    }

    @Test func aListenBrainzZIPInOneCommand() async throws {
        let folder = try Folder()
        let zip = try folder.zip("listenbrainz_alice_1700000000.zip", [
            ("user.json", #"{"user_id": 1, "user_name": "alice"}"#),
            ("feedback.jsonl", #"{"recording_msid": "x", "score": 1}"#),
            ("listens/2020/1.jsonl", [Self.listen(1_580_495_100, "Portishead", "Sour Times"), Self.listen(1_580_495_400, "Portishead", "Roads"),
                                      "{broken"].joined(separator: "\n")),
            ("listens/2020/2.jsonl", Self.listen(1_581_000_000, "Portishead", "Glory Box")),
        ])
        let run = try await vinylogue(["import", zip, "--user", "alice", "--data-dir", folder.data])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Read 4 files:"))
        #expect(run.stdout.contains("listens/2020/1.jsonl  ListenBrainz listens (JSON lines): 2 imported, 0 duplicates, 1 rejected"))
        #expect(run.stdout.contains("user.json             skipped: ListenBrainz account details, not listening history"))
        #expect(run.stdout.contains("In all: Imported 3 scrobbles for alice; 0 duplicates skipped; 1 lines rejected."))
        #expect(run.stdout.contains("rejected listens/2020/1.jsonl, line 3: invalid JSON"))

        let again = try await vinylogue(["import", zip, "--user", "alice", "--data-dir", folder.data])
        #expect(again.status == 0)
        #expect(again.stdout.contains("In all: Imported 0 scrobbles for alice; 3 duplicates skipped"))
    }

    @Test func aSpotifyZIPInOneCommand() async throws {
        let folder = try Folder()
        let entry = #"{"ts": "2020-01-31T18:28:21Z", "ms_played": 201000, "master_metadata_track_name": "Glory Box", "#
            + #""master_metadata_album_artist_name": "Portishead", "master_metadata_album_album_name": "Dummy"}"#
        let zip = try folder.zip("my_spotify_data.zip", [
            ("Spotify Extended Streaming History/Streaming_History_Audio_2020.json", "[" + entry + "]"),
            ("Spotify Extended Streaming History/Streaming_History_Video_2020.json", "[]"),
        ])
        let run = try await vinylogue(["import", zip, "--user", "alice", "--data-dir", folder.data])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Streaming_History_Audio_2020.json  Spotify extended streaming history (JSON): 1 imported"))
        #expect(run.stdout.contains("skipped: Spotify video history, not music"))
    }

    @Test func anUnrecognisedFileSaysSoAndNamesTheFormats() async throws {
        let folder = try Folder()
        let zip = folder.url.appendingPathComponent("listenbrainz_export.csv")
        try "artist,album,track\nA,B,C\n".write(to: zip, atomically: true, encoding: .utf8)
        let run = try await vinylogue(["import", zip.path, "--user", "alice", "--data-dir", folder.data])
        #expect(run.status == 1)
        #expect(run.stderr.contains("is not an export Vinylogue recognises, so nothing was imported"))
        #expect(run.stderr.contains("Rockbox .scrobbler.log") && run.stderr.contains("--format"))
        #expect(!run.stderr.contains("expected 4 columns"))

        let wrong = try await vinylogue(["import", zip.path, "--user", "alice", "--format", "excel", "--data-dir", folder.data])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("“excel” is not a format Vinylogue knows. Use one of: lastfm-csv"))
    }

    @Test func aZIPWithNoHistorySaysWhatWasInIt() async throws {
        let folder = try Folder()
        let zip = try folder.zip("export.zip", [("user.json", "{}"), ("notes.txt", "hello")])
        let run = try await vinylogue(["import", zip, "--user", "alice", "--data-dir", folder.data])
        #expect(run.status == 2)
        #expect(run.stdout.contains("notes.txt  skipped: not a format Vinylogue recognises"))
        #expect(run.stderr.contains("No listening history was found in"))
    }

    @Test func aZIPWhoseOnlyMemberIsDamagedSaysToDownloadItAgain() async throws {
        let folder = try Folder()
        let url = folder.url.appendingPathComponent("export.zip")
        let text = Self.listen(1_580_495_100, "Portishead", "Roads") + "\n"
        let archive = try Archive(url: url, accessMode: .create)
        let data = Data(text.utf8)
        try archive.addEntry(with: "listens/2020/1.jsonl", type: .file, uncompressedSize: Int64(data.count), compressionMethod: .none) { position, size in
            data.subdata(in: Int(position)..<(Int(position) + size))
        }
        // Flip one byte of the stored member: its CRC no longer matches.
        var bytes = try Data(contentsOf: url)
        let at = try #require(bytes.range(of: Data("Portishead".utf8))).lowerBound
        bytes[at] ^= 0x20
        try bytes.write(to: url)
        let run = try await vinylogue(["import", url.path, "--user", "alice", "--data-dir", folder.data])
        #expect(run.status == 2)
        #expect(run.stdout.contains("Read 1 file:"))
        #expect(run.stdout.contains("refused: it is damaged (its checksum does not match); download the export again"))
        #expect(run.stderr.contains("Nothing was imported from") && run.stderr.contains("Download the export again"))
    }
}

/// What a hostile probe found in `vinylogue import` (issue 27): a pipe or
/// a device given as the export hung for ever; members of a directory
/// given by a relative path were named by cutting the absolute path; a ZIP
/// with a damaged table of contents was called "not your export".
@Suite struct ImportPathTests {
    typealias Folder = ImportCommandTests.Folder
    static let csv = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid\n1580495100,x,Radiohead,,OK Computer,,Airbag,\n"

    @Test(.timeLimit(.minutes(1))) func aPipeOrADeviceGivenDirectlyIsASentenceNotAHang() async throws {
        let folder = try Folder()
        let fifo = folder.url.appendingPathComponent("export.csv").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = try await vinylogue(["import", fifo, "--user", "ann", "--data-dir", folder.data])
        #expect(pipe.status == 1, "\(pipe.stdout)\(pipe.stderr)")
        #expect(pipe.stderr.contains("is a named pipe (FIFO), not a file. Give the path of an export file"), "\(pipe.stderr)")
        let device = try await vinylogue(["import", "/dev/zero", "--user", "ann", "--data-dir", folder.data])
        #expect(device.status == 1, "\(device.stdout)\(device.stderr)")
        #expect(device.stderr.contains("“/dev/zero” could not be read: it is a device, not a file"), "\(device.stderr)")
    }

    /// A directory named through a symbolic link (`latest -> exports/2026`)
    /// is the directory the person means: its files are imported, named
    /// below it. It found nothing: the walk did not enter the link.
    @Test func aDirectoryGivenThroughALinkIsImported() async throws {
        let folder = try Folder()
        let dir = folder.url.appendingPathComponent("exports")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Self.csv.write(to: dir.appendingPathComponent("a.csv"), atomically: true, encoding: .utf8)
        let link = folder.url.appendingPathComponent("latest").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
        let run = try await vinylogue(["import", link, "--user", "ann", "--data-dir", folder.data])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("a.csv ") }, "\(run.stdout)")
    }

    @Test func membersAreNamedBelowTheDirectoryHoweverItIsSpelt() async throws {
        let folder = try Folder()
        let dir = folder.url.appendingPathComponent("dir1")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Self.csv.write(to: dir.appendingPathComponent("a.csv"), atomically: true, encoding: .utf8)
        try (Self.csv + "bad,line\n").write(to: dir.appendingPathComponent("sub/b.csv"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("linked.csv").path, withDestinationPath: "/etc/passwd")
        #expect(mkfifo(dir.appendingPathComponent("pipe.csv").path, 0o600) == 0)
        let spellings: [(String, URL)] = [("dir1", folder.url), ("./dir1", folder.url), ("dir1/", folder.url), (dir.path, folder.url),
                                          (String(dir.path.dropFirst()), URL(fileURLWithPath: "/"))]
        for (index, (spelling, cwd)) in spellings.enumerated() {
            let run = try await vinylogue(["import", spelling, "--user", "u\(index)", "--data-dir", folder.data], in: cwd)
            #expect(run.status == 0, "\(spelling): \(run.stderr)")
            let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.contains { $0.hasPrefix("a.csv ") }, "\(spelling): \(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("sub/b.csv ") }, "\(spelling): \(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("linked.csv ") && $0.hasSuffix("skipped: a symbolic link, not followed") }, "\(spelling): \(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("pipe.csv ") && $0.hasSuffix("skipped: a named pipe (FIFO), not read") }, "\(spelling): \(run.stdout)")
            #expect(run.stdout.contains("rejected sub/b.csv, line 3"), "\(spelling): \(run.stdout)")
            // In natural order, the skipped among the read.
            let order = ["a.csv ", "linked.csv ", "pipe.csv ", "sub/b.csv "].map { prefix in lines.firstIndex { $0.hasPrefix(prefix) } ?? -1 }
            #expect(order == order.sorted() && !order.contains(-1), "\(spelling): \(run.stdout)")
        }
    }

    /// Three ways a ZIP's table of contents is damaged; each is said to be
    /// damaged (exit 1), as a truncated one is, and nothing is stored.
    @Test func aDamagedTableOfContentsIsSaidToBeDamaged() async throws {
        let folder = try Folder()
        let good = try folder.zip("good.zip", [("a.csv", Self.csv)])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
        func signature(_ third: UInt8, _ fourth: UInt8, at i: Int) -> Bool {
            bytes[i] == 0x50 && bytes[i + 1] == 0x4B && bytes[i + 2] == third && bytes[i + 3] == fourth
        }
        let end = try #require(stride(from: bytes.count - 22, through: 0, by: -1).first { signature(5, 6, at: $0) })
        let directory = try #require((0..<bytes.count - 3).first { signature(1, 2, at: $0) })
        var farOffset = bytes
        farOffset.replaceSubrange(end + 16..<end + 20, with: [0xF0, 0xFF, 0xFF, 0xFF])
        var brokenEntry = bytes
        brokenEntry[directory + 2] = 0x09
        var noEntries = bytes
        noEntries.replaceSubrange(end + 8..<end + 12, with: [0, 0, 0, 0])
        for (name, damaged) in [("offset", farOffset), ("signature", brokenEntry), ("count", noEntries)] {
            let path = folder.url.appendingPathComponent("\(name).zip").path
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            let run = try await vinylogue(["import", path, "--user", "ann", "--data-dir", folder.data])
            #expect(run.status == 1, "\(name): \(run.stdout)\(run.stderr)")
            #expect(run.stderr.contains("table of contents is damaged"), "\(name): \(run.stderr)")
            #expect(!run.stderr.contains("No listening history"), "\(name)")
        }
        let intact = try await vinylogue(["import", good, "--user", "ann", "--data-dir", folder.data])
        #expect(intact.status == 0 && intact.stdout.contains("Imported 1 scrobbles"), "\(intact.stdout)\(intact.stderr)")
    }

    /// A ZIP whose end record declares fewer members than its table of
    /// contents holds: the members past the count were left out, and the
    /// import said nothing of them. Now the table is counted as it is.
    @Test func aZIPDeclaringFewerMembersThanItHoldsIsSaidToBeDamaged() async throws {
        let folder = try Folder()
        let lines = ["1580495100,x,Radiohead,,OK Computer,,Airbag,", "1580495400,x,Radiohead,,OK Computer,,Paranoid Android,",
                     "1580495800,x,Radiohead,,OK Computer,,Subterranean Homesick Alien,"]
        let header = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid\n"
        let three = try folder.zip("three.zip", lines.enumerated().map { ("\($0.offset).csv", header + $0.element + "\n") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: three)))
        let end = try #require(stride(from: bytes.count - 22, through: 0, by: -1).first {
            bytes[$0] == 0x50 && bytes[$0 + 1] == 0x4B && bytes[$0 + 2] == 5 && bytes[$0 + 3] == 6
        })
        bytes.replaceSubrange(end + 8..<end + 12, with: [2, 0, 2, 0])
        let path = folder.url.appendingPathComponent("fewer.zip").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try await vinylogue(["import", path, "--user", "ann", "--data-dir", folder.data])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("table of contents is damaged"), "\(run.stderr)")
    }
}
