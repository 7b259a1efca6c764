import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Imports
@testable import Stores

@Suite struct ImportFormatTests {
    @Test func headerlessLastFMCSVWithQuotingAndBrokenLines() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("scrobbles.csv", #"""
            Radiohead,OK Computer,Airbag,31 Jan 2020 18:25
            "Crosby, Stills & Nash",Déjà Vu,"Carry On",01 Feb 2020 09:05
            "The ""Band""",,Intro,29 Feb 2020 23:59
            Broken,Album,Track,31 Feb 2020 10:00
            Too,Many,Columns,Here,01 Mar 2020 10:00
            "Unterminated,Album,Track,01 Mar 2020 10:00
            Fine,Album,Track,not a date

            Last,One,Song,1 Mar 2020 00:00
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .lastFMCSV)
        #expect(summary.imported == 4)
        #expect(summary.rejectedCount == 4)
        #expect(summary.rejected.map(\.line) == [4, 5, 6, 7])
        #expect(summary.rejected[0].reason.contains("invalid date"))
        #expect(summary.rejected[1].reason.contains("expected 4 columns, found 5"))
        #expect(summary.rejected[2].reason.contains("unterminated"))
        #expect(summary.rejected[3].reason.contains("invalid date"))

        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.count == 4)
        #expect(all[0] == Scrobble(instant: 1_580_495_100, artist: "Radiohead", album: "OK Computer", track: "Airbag"))
        #expect(all[1].artist == "Crosby, Stills & Nash" && all[1].album == "Déjà Vu" && all[1].track == "Carry On")
        #expect(all[2].artist == "The \"Band\"" && all[2].album == "" && all[2].instant == 1_583_020_740)
        #expect(all[3].instant == 1_583_020_800)

        let again = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(again.imported == 0 && again.duplicates == 4)
        #expect(try await store.scrobbleCount(of: alice) == 4)
    }

    @Test func lastFMCSVWithHeaderKeepsMBIDs() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("export.csv", #"""
            uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid
            1580495100,"31 Jan 2020, 18:25",Radiohead,a74b1b7f-71a5-4011-9441-d0b5e4122711,OK Computer,b1392450-e666-3926-a536-22c65f834433,Airbag,1c4a8f85-4bdb-4b1e-9a3a-0a7c7d5d0f4b
            1580495400,"31 Jan 2020, 18:30",Radiohead,,"OK Computer",,"Paranoid Android",
            soon,"31 Jan 2020, 18:35",Radiohead,,OK Computer,,Subterranean Homesick Alien,
            1580495700,"31 Jan 2020, 18:35",Radiohead,,OK Computer,,,
            1580495900,"31 Jan 2020, 18:35"x,Radiohead,,OK Computer,,Exit Music,
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .lastFMCSVWithHeader)
        #expect(summary.imported == 2)
        #expect(summary.rejected.map(\.line) == [4, 5, 6])
        #expect(summary.rejected[0].reason.contains("invalid date"))
        #expect(summary.rejected[1].reason.contains("missing track"))
        #expect(summary.rejected[2].reason.contains("after the closing quote"))
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all[0].artistMBID == "a74b1b7f-71a5-4011-9441-d0b5e4122711")
        #expect(all[0].albumMBID == "b1392450-e666-3926-a536-22c65f834433")
        #expect(all[1].track == "Paranoid Android" && all[1].artistMBID == nil)
    }

    /// A CSV whose header names an album artist column keeps it.
    @Test func aCSVsAlbumArtistColumnIsKept() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("export.csv", #"""
            uts,artist,album,track,Album Artist
            1580495100,Blur,Now 50,Country House,Various Artists
            1580495400,Pulp,Now 50,Disco 2000,Various Artists
            1580495700,Blur,Parklife,Girls & Boys,
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.imported == 3 && summary.rejected.isEmpty)
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.map { $0.albumArtist ?? "-" } == ["Various Artists", "Various Artists", "-"])
        #expect(try await store.albumWeeks(of: alice, artist: "Various Artists", album: "Now 50")?.map(\.plays) == [2])
    }

    @Test func listenBrainzJSONArrayStreamsAndReportsBadElements() async throws {
        let dir = try TemporaryDirectory()
        // The shape of a ListenBrainz user export (listens.json).
        let path = try dir.file("listens.json", #"""
            [
              {
                "listened_at": 1580495100,
                "recording_msid": "d23f4719-9212-49f0-ad08-ddbfbfc50d6f",
                "track_metadata": {
                  "artist_name": "Portishead",
                  "release_name": "Dummy",
                  "track_name": "Sour Times",
                  "additional_info": {
                    "recording_mbid": "7c5b5ba7-8d23-4ed6-9e1c-9e7a0c4f5a3f",
                    "release_mbid": "76df3287-6cda-33eb-8e9a-044b5e15ffdd",
                    "artist_mbids": ["8f6bd1e4-fbe1-4f50-aa9b-94c450ec0f11"],
                    "release_artist_name": "Portishead"
                  }
                }
              },
              {"listened_at": 1580495400, "track_metadata": {"artist_name": "Portishead", "release_name": "Dummy"}},
              {"listened_at": 1580495700, "track_metadata": {"artist_name": "Portishead", "track_name": "Roads", tru}},
              {"listened_at": "2020-01-31T18:40:00Z", "track_metadata": {"artist_name": "Massive Attack", "track_name": "Teardrop, \"live\""}},
              {"track_metadata": {"artist_name": "Nobody", "track_name": "Nothing"}}
            ]
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .listenBrainzJSON)
        #expect(summary.imported == 2)
        #expect(summary.rejected.map(\.line) == [17, 18, 20])
        #expect(summary.rejected[0].reason.contains("track_name"))
        #expect(summary.rejected[1].reason.contains("invalid JSON"))
        #expect(summary.rejected[2].reason.contains("listened_at"))
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all[0] == Scrobble(instant: 1_580_495_100, artist: "Portishead", album: "Dummy", track: "Sour Times",
                                   artistMBID: "8f6bd1e4-fbe1-4f50-aa9b-94c450ec0f11", albumMBID: "76df3287-6cda-33eb-8e9a-044b5e15ffdd",
                                   trackMBID: "7c5b5ba7-8d23-4ed6-9e1c-9e7a0c4f5a3f", albumArtist: "Portishead"))
        #expect(all[1].instant == 1_580_496_000 && all[1].track == "Teardrop, \"live\"" && all[1].album == "")
    }

    @Test func truncatedJSONArrayKeepsWhatCameBefore() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("cut.json", #"""
            [{"listened_at": 1580495100, "track_metadata": {"artist_name": "A", "track_name": "One"}},
             {"listened_at": 1580495400, "track_metadata": {"artist_name": "A", "track_name": "Tw
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.imported == 1)
        #expect(summary.rejected.count == 1)
        #expect(summary.rejected.first?.line == 2)
        #expect(summary.rejected.first?.reason.contains("ends inside an element") == true)
    }

    @Test func listenBrainzJSONLines() async throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("2020-01.jsonl", #"""
            {"listened_at": 1580495100, "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": "Jóga", "mbid_mapping": {"recording_mbid": "rec-1", "release_mbid": "rel-1", "artist_mbids": ["art-1"]}}}
            {"listened_at": 1580495400, "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": "Bachelorette"
            {"listened_at": 1580495700, "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": "Hunter"}}
            [1, 2]
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .listenBrainzJSONLines)
        #expect(summary.imported == 2)
        #expect(summary.rejected.map(\.line) == [2, 4])
        #expect(summary.rejected[1].reason.contains("not a JSON object"))
        let first = try #require(try await store.scrobbles(of: alice, from: 0, to: .max).first)
        #expect(first.albumMBID == "rel-1" && first.trackMBID == "rec-1" && first.artistMBID == "art-1" && first.track == "Jóga")
    }

    @Test func spotifyExtendedHistoryCountsOnlyRealPlays() async throws {
        let dir = try TemporaryDirectory()
        // Field names as in Spotify's "Extended streaming history" ReadMe.
        let path = try dir.file("Streaming_History_Audio_2020.json", #"""
            [
            {"ts": "2020-01-31T18:28:21Z", "platform": "android", "ms_played": 201000, "conn_country": "DE",
             "master_metadata_track_name": "Glory Box", "master_metadata_album_artist_name": "Portishead",
             "master_metadata_album_album_name": "Dummy", "spotify_track_uri": "spotify:track:3Ty7OTBNSigGEpeW2PqcsC",
             "episode_name": null, "episode_show_name": null, "spotify_episode_uri": null, "reason_start": "trackdone",
             "reason_end": "trackdone", "shuffle": false, "skipped": null, "offline": false, "incognito_mode": false},
            {"ts": "2020-01-31T18:29:00Z", "ms_played": 12000, "master_metadata_track_name": "Wandering Star",
             "master_metadata_album_artist_name": "Portishead", "master_metadata_album_album_name": "Dummy"},
            {"ts": "2020-01-31T19:30:00Z", "ms_played": 1800000, "master_metadata_track_name": null,
             "master_metadata_album_artist_name": null, "master_metadata_album_album_name": null,
             "episode_name": "Episode 12", "episode_show_name": "A Podcast"},
            {"ts": "yesterday", "ms_played": 200000, "master_metadata_track_name": "Roads",
             "master_metadata_album_artist_name": "Portishead", "master_metadata_album_album_name": "Dummy"},
            {"ts": "2020-01-31T20:00:00Z", "ms_played": 30000, "master_metadata_track_name": "Roads",
             "master_metadata_album_artist_name": "Portishead", "master_metadata_album_album_name": "Dummy"}
            ]
            """#)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.format == .spotifyJSON)
        #expect(summary.imported == 2)
        #expect(summary.skipped["plays shorter than 30 seconds"] == 1)
        #expect(summary.skipped["entries without a track (podcasts)"] == 1)
        #expect(summary.rejected.map(\.line) == [12])
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        // ts is the end of playback; the instant is when it started.
        #expect(all.map(\.instant) == [1_580_495_301 - 201, 1_580_500_800 - 30])
        #expect(all[0].track == "Glory Box" && all[0].album == "Dummy")
    }

    @Test func largeFileCrossesChunkBoundaries() async throws {
        let dir = try TemporaryDirectory()
        // ~3 MB: lines straddle the importer's 1 MiB reads.
        var text = csvHeader + "\n"
        for i in 0..<40_000 {
            text += csvLine(Scrobble(instant: 1_500_000_000 + Int64(i) * 60, artist: "Artist \(i % 37) with a longer name",
                                     album: "Album, \(i % 91)", track: "Track \"\(i)\"")) + "\n"
        }
        text += "1500000000,x,\"unterminated\n"
        let path = try dir.file("big.csv", text)
        let store = try dir.store()
        var reports = 0
        let summary = try ScrobbleImporter(store: store, clock: testClock, batchSize: 7_000).importFile(at: path, for: alice) { _ in reports += 1 }
        #expect(summary.imported == 40_000)
        #expect(summary.rejected.map(\.line) == [40_002])
        #expect(reports >= 6)
        #expect(try await store.scrobbleCount(of: alice) == 40_000)
        let some = try await store.scrobbles(of: alice, from: 1_500_000_000 + 12_345 * 60, to: 1_500_000_000 + 12_346 * 60)
        #expect(some == [Scrobble(instant: 1_500_000_000 + 12_345 * 60, artist: "Artist \(12_345 % 37) with a longer name",
                                  album: "Album, \(12_345 % 91)", track: "Track \"12345\"")])
    }

    @Test func emptyFileIsReported() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.file("empty.csv", "")
        let summary = try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: path, for: alice)
        #expect(summary.imported == 0 && summary.rejected.first?.line == 1)
    }

    @Test func missingFileIsReportedAsUnreadable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("nope.csv").path
        #expect(throws: SourceError.unreadableFile(path: path, reason: "No such file or directory")) {
            try ScrobbleImporter(store: try dir.store(), clock: testClock).importFile(at: path, for: alice)
        }
    }
}

@Suite struct ImportEdgeTests {
    @Test func bracketsAndQuotesInsideJSONStringsAndCRLFLines() async throws {
        let dir = try TemporaryDirectory()
        let json = "[\r\n" + #"""
            {"listened_at": 1580495100, "track_metadata": {"artist_name": "A ] B", "release_name": "{Live}", "track_name": "Say \"[hi]\", \\o/"}},
            {"listened_at": 1580495400, "track_metadata": {"artist_name": "C", "track_name": "D", "additional_info": {"tags": [["x"], {"y": "]"}]}}}
            ]
            """#.replacingOccurrences(of: "\n", with: "\r\n")
        let path = try dir.file("nested.json", json)
        let store = try dir.store()
        let summary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: path, for: alice)
        #expect(summary.imported == 2 && summary.rejectedCount == 0)
        let all = try await store.scrobbles(of: alice, from: 0, to: .max)
        #expect(all.first == Scrobble(instant: 1_580_495_100, artist: "A ] B", album: "{Live}", track: #"Say "[hi]", \o/"#))

        let csv = try dir.file("crlf.csv", "Artist,Album,Track,31 Jan 2020 18:25\r\nArtist,Album,Track 2,31 Jan 2020 18:29\r\n")
        let csvSummary = try ScrobbleImporter(store: store, clock: testClock).importFile(at: csv, for: alice)
        #expect(csvSummary.imported == 2)
        #expect(try await store.scrobbles(of: alice, from: 1_580_495_340, to: 1_580_495_341).first?.track == "Track 2")
    }

    @Test func timestampsParseOnlyRealDates() {
        #expect(Timestamps.lastFMExportDate("31 Jan 2020 18:25") == 1_580_495_100)
        #expect(Timestamps.lastFMExportDate("1 Mar 2020, 00:00") == 1_583_020_800)
        #expect(Timestamps.lastFMExportDate("29 Feb 2019 10:00") == nil)
        #expect(Timestamps.lastFMExportDate("31 Foo 2020 18:25") == nil)
        #expect(Timestamps.lastFMExportDate("31 Jan 2020 25:00") == nil)
        #expect(Timestamps.iso8601("2020-01-31T18:25:00Z") == 1_580_495_100)
        #expect(Timestamps.iso8601("2020-01-31T19:25:00.250+01:00") == 1_580_495_100)
        #expect(Timestamps.iso8601("2020-01-31") == nil)
        #expect(Timestamps.unix(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0) == 0)
    }
}
