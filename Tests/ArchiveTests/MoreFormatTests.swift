import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

/// The formats added for issue 12, each from a sample written from its
/// documentation, broken lines included.
@Suite struct MoreFormatTests {
    /// The `scrobbles-*.json` of the common Last.fm export site: an array of
    /// pages, each the `track` array of a `user.getRecentTracks` answer.
    @Test func lastFMJSONExportPagesOfRecentTracks() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("scrobbles-alice-1700000000.json", #"""
            [[
              {"artist": {"mbid": "a74b1b7f-71a5-4011-9441-d0b5e4122711", "#text": "Radiohead"}, "streamable": "0",
               "image": [{"size": "small", "#text": "https://lastfm.freetls.fastly.net/i/u/34s/x.png"}],
               "mbid": "1c4a8f85-4bdb-4b1e-9a3a-0a7c7d5d0f4b", "album": {"mbid": "b1392450-e666-3926-a536-22c65f834433", "#text": "OK Computer"},
               "name": "Airbag", "@attr": {"nowplaying": "true"}, "url": "https://www.last.fm/music/Radiohead/_/Airbag"},
              {"artist": {"mbid": "a74b1b7f-71a5-4011-9441-d0b5e4122711", "#text": "Radiohead"}, "streamable": "0",
               "mbid": "1c4a8f85-4bdb-4b1e-9a3a-0a7c7d5d0f4b", "album": {"mbid": "b1392450-e666-3926-a536-22c65f834433", "#text": "OK Computer"},
               "name": "Airbag", "url": "https://www.last.fm/music/Radiohead/_/Airbag", "date": {"uts": "1580495100", "#text": "31 Jan 2020, 18:25"}}
            ],
            [
              {"artist": {"mbid": "", "#text": "Portishead"}, "mbid": "", "album": {"mbid": "", "#text": "Dummy"},
               "name": "Roads", "date": {"uts": "1580400000", "#text": "30 Jan 2020, 16:00"}},
              {"artist": {"mbid": "", "#text": "Portishead"}, "mbid": "", "album": {"mbid": "", "#text": "Dummy"}, "name": "No Date"},
              {"artist": {"mbid": "", "#text": ""}, "name": "No Artist", "date": {"uts": "1580400300"}}
            ],
            [{"oops": true
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .lastFMJSON)
        #expect(summary.imported == 2)
        #expect(summary.skipped["tracks playing at export time (not scrobbled yet)"] == 1)
        // A page's rejections carry the line the page starts on.
        #expect(summary.rejected.map(\.line) == [10, 10, 16])
        #expect(summary.rejected[0].reason.contains("date.uts") && summary.rejected[1].reason.contains("artist"))
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.map(\.track) == ["Roads", "Airbag"])
        #expect(all[1] == Scrobble(instant: 1_580_495_100, artist: "Radiohead", album: "OK Computer", track: "Airbag",
                                   artistMBID: "a74b1b7f-71a5-4011-9441-d0b5e4122711", albumMBID: "b1392450-e666-3926-a536-22c65f834433",
                                   trackMBID: "1c4a8f85-4bdb-4b1e-9a3a-0a7c7d5d0f4b"))
        #expect(all[0].artistMBID == nil && all[0].album == "Dummy")
    }

    /// Audioscrobbler 1.1, as Rockbox writes it: only `L` lines are plays.
    @Test func rockboxScrobblerLog() async throws {
        let dir = try TemporaryDirectory()
        let lines = [
            "#AUDIOSCROBBLER/1.1",
            "#TZ/UTC",
            "#CLIENT/Rockbox sansaclipplus $Revision$",
            "Portishead\tDummy\tMysterons\t1\t306\tL\t1580495100\t6bf2e5e5-5b4e-4d17-9b83-bcb8d2b1b0a1",
            "Portishead\tDummy\tSour Times\t2\t252\tS\t1580495406\t",
            "Portishead\tDummy\tStrangers\t3\t238\tL\t1580495658",
            "Portishead\tDummy\tIt Could Be Sweet\t4\t260\tL",
            "Portishead\tDummy\tWandering Star\t5\t293\tL\tsoon\t",
            "Portishead\tDummy\tNumb\t6\t238\tX\t1580496000\t",
            "\t\tNo One\t7\t100\tL\t1580496300\t",
            "",
        ]
        let path = try dir.file(".scrobbler.log", lines.joined(separator: "\n"))
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .scrobblerLog)
        #expect(summary.imported == 2)
        #expect(summary.skipped["tracks skipped on the player (rating S)"] == 1)
        #expect(summary.rejected.map(\.line) == [7, 8, 9, 10])
        #expect(summary.rejected[0].reason.contains("expected 7 or 8"))
        #expect(summary.notes.isEmpty)
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.map(\.track) == ["Mysterons", "Strangers"])
        #expect(all[0].trackMBID == "6bf2e5e5-5b4e-4d17-9b83-bcb8d2b1b0a1" && all[0].album == "Dummy" && all[0].instant == 1_580_495_100)

        // #TZ/UNKNOWN: the times are kept as written, and the summary says what that means.
        let unknown = try dir.file("unknown.scrobbler.log", "#AUDIOSCROBBLER/1.1\n#TZ/UNKNOWN\n#CLIENT/Rockbox\n"
            + "Björk\tHomogenic\tJóga\t1\t305\tL\t1580600000\t\n")
        let second = try ScrobbleImporter(store: store, clock: testClock).importFile(at: unknown, for: alice)
        #expect(second.imported == 1)
        #expect(second.notes == [ScrobblerLogLine.unknownZoneNote])

        // With the player's zone, wall-clock times become real instants
        // (Berlin is UTC+1 in February, UTC+2 in July). #TZ/UTC logs are never shifted.
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let zoned = try dir.store("zoned")
        let converted = try ScrobbleImporter(store: zoned, clock: testClock, playerTimeZone: berlin).importFile(at: unknown, for: alice)
        #expect(converted.notes == [ScrobblerLogLine.convertedNote(berlin)])
        let summer = try dir.file("summer.scrobbler.log", "#AUDIOSCROBBLER/1.1\n#TZ/UNKNOWN\n#CLIENT/Rockbox\n"
            + "Björk\tVespertine\tHidden Place\t1\t330\tL\t1594000000\t\n")
        _ = try ScrobbleImporter(store: zoned, clock: testClock, playerTimeZone: berlin).importFile(at: summer, for: alice)
        _ = try ScrobbleImporter(store: zoned, clock: testClock, playerTimeZone: berlin).importFile(at: path, for: alice)
        let instants = try await zoned.scrobbles(of: alice, from: 0, to: .max).map(\.instant)
        #expect(instants == [1_580_495_100, 1_580_495_658, 1_580_600_000 - 3600, 1_594_000_000 - 7200])
    }

    /// Maloja's export (`json.dump(indent=3)` of `{"maloja": {...}, "scrobbles": [...]}`).
    @Test func malojaExport() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("maloja_export_2024_01_01_00_00_00.json", #"""
            {
               "maloja": {
                  "export_time": 1704067200,
                  "note": "a \"scrobbles\": [ inside a string is not the list"
               },
               "scrobbles": [
                  {
                     "time": 1580495100,
                     "track": {
                        "artists": ["Massive Attack", "Horace Andy"],
                        "title": "Angel",
                        "album": {"albumtitle": "Mezzanine", "artists": ["Massive Attack"]},
                        "length": 379
                     },
                     "duration": 370,
                     "origin": "client:default"
                  },
                  {"time": 1580495600, "track": {"artists": ["Portishead"], "title": "Roads", "album": {"name": "Dummy"}, "length": null},
                   "duration": null, "origin": "import:lastfm"},
                  {"time": 1580496000, "track": {"artists": [], "title": "Nobody"}},
                  {"time": "later", "track": {"artists": ["A"], "title": "B"}},
                  {"time": 1580497000, "track": {"artists": ["Tricky"], "title": "Overcome", "album": null}}
               ]
            }
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .malojaJSON)
        #expect(summary.imported == 3)
        #expect(summary.rejected.map(\.line) == [20, 21])
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all[0] == Scrobble(instant: 1_580_495_100, artist: "Massive Attack, Horace Andy", album: "Mezzanine", track: "Angel",
                                   albumArtist: "Massive Attack"))
        #expect(all[1].albumArtist == nil)
        // The album counts for its album artist, not the track's credit.
        #expect(try await store.albumWeeks(of: alice, artist: "Massive Attack", album: "Mezzanine")?.map(\.plays) == [1])
        #expect(all[1].album == "Dummy" && all[2].album == "")

        let noList = try dir.file("maloja-broken.json", #"{"maloja": {"export_time": 1}, "scrobbles": {"time": 1}}"#)
        let broken = try ScrobbleImporter(store: store, clock: testClock).importFile(at: noList, for: alice)
        #expect(broken.imported == 0 && broken.rejected.first?.reason.contains("not a list") == true)
    }

    /// Spotify's account data (`StreamingHistory0.json`, later `StreamingHistory_music_0.json`): no album.
    @Test func spotifyAccountDataKeepsPlaysWithoutAlbums() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("StreamingHistory0.json", #"""
            [
              {"endTime": "2020-01-31 18:28", "artistName": "Portishead", "trackName": "Glory Box", "msPlayed": 201000},
              {"endTime": "2020-01-31 18:29", "artistName": "Portishead", "trackName": "Wandering Star", "msPlayed": 12000},
              {"endTime": "31/01/2020 18:40", "artistName": "Portishead", "trackName": "Roads", "msPlayed": 300000},
              {"endTime": "2020-01-31 19:00", "artistName": "Portishead", "trackName": "Pedestal", "msPlayed": 220000}
            ]
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .spotifyAccountJSON)
        #expect(summary.imported == 2)
        #expect(summary.skipped["plays shorter than 30 seconds"] == 1)
        #expect(summary.rejected.map(\.line) == [4])
        #expect(summary.notes.count == 1 && summary.notes[0].contains("no album"))
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.map(\.instant) == [1_580_495_280 - 201, 1_580_497_200 - 220])
        #expect(all.allSatisfy { $0.album.isEmpty && $0.artist == "Portishead" })
    }

    /// A file no format matches imports nothing and is not taken for CSV.
    @Test func anUnrecognisedFileImportsNothing() throws {
        let dir = try TemporaryDirectory()
        let store = try dir.store()
        let importer = ScrobbleImporter(store: store, clock: testClock)
        let samples = [
            "notes.txt": "Shopping list\nmilk,eggs,bread\n",
            "three-columns.csv": "artist,album,track\nA,B,C\n",
            "SearchQueries.json": #"[{"platform": "ANDROID", "searchTime": "2020-01-31T18:25:00Z", "searchQuery": "portishead"}]"#,
            "Userdata.json": "{\n  \"username\": \"alice\",\n  \"country\": \"DE\"\n}\n",
            "binary.bin": String(decoding: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], as: UTF8.self),
        ]
        for (name, text) in samples.sorted(by: { $0.key < $1.key }) {
            let summary = try importer.importFile(at: try dir.file(name, text), for: alice)
            #expect(summary.format == nil, "\(name)")
            #expect(summary.unrecognised.map(\.name) == [name])
            #expect(summary.imported == 0 && summary.rejectedCount == 0, "\(name): \(summary.rejected)")
        }
        #expect(try store.userID(of: alice) == nil)
    }

    /// `--format` replaces detection: a CSV whose first line is not shaped
    /// like a Last.fm row is read as one when the person says so.
    @Test func aNamedFormatOverridesDetection() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("odd.csv", "Radiohead,OK Computer,Airbag,31/01/2020\nRadiohead,OK Computer,Lucky,31 Jan 2020 18:25\n")
        let store = try dir.store()
        let guessed = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(guessed.unrecognised.count == 1 && guessed.imported == 0)
        let named = try ScrobbleImporter(store: store, clock: testClock, format: FormatChoice("lastfm-csv")).importFile(at: path, for: alice)
        #expect(named.format == .lastFMCSV && named.imported == 1 && named.rejected.map(\.line) == [1])
        #expect(FormatChoice("LastFM-JSON") != nil && FormatChoice("csv") == nil)
    }

    /// A directory: every file in it, in natural order, each detected on its own.
    @Test func aDirectoryImportsEveryFileInIt() throws {
        let dir = try TemporaryDirectory()
        let export = dir.url.appendingPathComponent("export")
        try FileManager.default.createDirectory(at: export.appendingPathComponent("listens/2020"), withIntermediateDirectories: true)
        try #"{"user_id": 1, "user_name": "alice"}"#.write(to: export.appendingPathComponent("user.json"), atomically: true, encoding: .utf8)
        try (listenLine(1_580_495_100, "A", "One") + "\n").write(to: export.appendingPathComponent("listens/2020/1.jsonl"),
                                                                atomically: true, encoding: .utf8)
        try (listenLine(1_581_000_000, "A", "Two") + "\nbroken\n").write(to: export.appendingPathComponent("listens/2020/2.jsonl"),
                                                                         atomically: true, encoding: .utf8)
        try "hello".write(to: export.appendingPathComponent("readme.txt"), atomically: true, encoding: .utf8)
        try "#AUDIOSCROBBLER/1.1\n#TZ/UTC\nA\tB\tThree\t1\t200\tL\t1582000000\t\n"
            .write(to: export.appendingPathComponent(".scrobbler.log"), atomically: true, encoding: .utf8)
        try "junk".write(to: export.appendingPathComponent(".DS_Store"), atomically: true, encoding: .utf8)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: export.path, for: alice)
        #expect(summary.isCollection)
        #expect(summary.members.map(\.name) == [".scrobbler.log", "listens/2020/1.jsonl", "listens/2020/2.jsonl", "readme.txt", "user.json"])
        #expect(summary.members.map(\.imported) == [1, 1, 1, 0, 0])
        #expect(summary.rejected == [RejectedLine(member: "listens/2020/2.jsonl", line: 2, reason: "invalid JSON")])
        #expect(summary.unrecognised.map(\.name) == ["readme.txt"])
        #expect(summary.members[4].outcome == .skipped("ListenBrainz account details, not listening history"))

        let empty = dir.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: SourceError.unreadableFile(path: empty.path, reason: "it is a directory with no export files in it")) {
            try ScrobbleImporter(store: store, clock: testClock).importFile(at: empty.path, for: alice)
        }
    }
}
