import Foundation
@testable import HTTPServing
import HummingbirdTesting
import Testing
import TestSupport
import VinylogueCore
@testable import Web

/// A person's own music server from the web: saved in Settings only once
/// it answers (a wrong password, a private address and a page that is no
/// server each a sentence, and nothing stored), never shown back; then the
/// week's page makes the playlist there, saying what it did not find.
/// The server is an in-process Subsonic-API library at the host the
/// harness's operator lists.
@Suite struct MusicServerRouteTests {
    static let week = LastFMWeekCalendar.week(containing: Int64(ChartWeekFinder(timeZone: .current).target(yearsAgo: 2, from: july2023)
        .timeIntervalSince1970.rounded(.down)))

    /// The demo's albums of that week, most played first (as its chart has them).
    static func weekAlbums() -> [(artist: String, album: String, plays: Int, tracks: [String])] {
        var plays: [String: (artist: String, album: String, plays: Int, tracks: [String])] = [:]
        for s in DemoHistory().scrobbles(in: week).sorted(by: { $0.instant < $1.instant }) where !s.album.isEmpty {
            var entry = plays[s.artist + "|" + s.album] ?? (s.artist, s.album, 0, [])
            entry.plays += 1
            if !entry.tracks.contains(s.track) { entry.tracks.append(s.track) }
            plays[s.artist + "|" + s.album] = entry
        }
        return plays.values.sorted { $0.plays > $1.plays }.map { ($0.artist, $0.album, $0.plays, $0.tracks) }
    }

    /// The album the library lacks: after the first, one whose play count no
    /// other album of the week shares (so its place is the chart's too).
    static var missing: Int {
        let albums = weekAlbums()
        return albums.indices.dropFirst().first { i in albums.filter { $0.plays == albums[i].plays }.count == 1 } ?? 1
    }

    /// A library holding every album of the week but one (`missing`), each with its played tracks and one more.
    static func library() -> FakeSubsonicLibrary {
        var albums: [FakeSubsonicLibrary.Album] = []
        for (index, album) in weekAlbums().enumerated() where index != missing {
            let titles = album.tracks + ["A Song Nobody Played"]
            albums.append(.init(id: "al\(index)", name: album.album, artist: album.artist, songs: titles.enumerated().map {
                .init(id: "s\(index)-\($0.offset)", title: $0.element, artist: album.artist, album: album.album, track: $0.offset + 1)
            }))
        }
        return FakeSubsonicLibrary(albums: albums, password: "right one")
    }

    @Test func aServerIsSavedOnlyOnceItAnswersAndTheWeeksPageMakesThePlaylistThere() async throws {
        let library = Self.library()
        let albums = Self.weekAlbums()
        try #require(albums.count >= 3)
        try await Harness.run(demo: true, musicServer: library) { _, client in
            let session = try await client.session()
            let empty = try await client.get("/settings", session: session)
            #expect(empty.body.contains("<h2>Your music server</h2>"))
            // Not saved yet: the week's page sends the person to Settings.
            #expect(try await client.get("/u/demo/playlist/2", session: session).body.contains("Add your music server"))

            let wrong = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "http://music.test:4533",
                                                                         "username": "demo", "password": "not it"], session: session)
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.body.contains("music.test:4533 does not accept that user and password. Check them, then try again. Nothing was saved."))
            #expect(!wrong.body.contains("not it"))
            let inside = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "http://192.168.1.5:4533",
                                                                          "username": "demo", "password": "right one"], session: session)
            #expect(inside.status == .unprocessableContent)
            #expect(inside.body.contains("is on a private network (192.168.1.5)"), "\(inside.body.suffix(3000))")
            let nonsense = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "nas",
                                                                            "username": "demo", "password": "x"], session: session)
            #expect(nonsense.body.contains("“nas” is not a server address"))
            #expect(library.playlists.withLock { $0.isEmpty })
            #expect(try await client.get("/settings", session: session).body.contains("Add the server you play your music from"))

            let saved = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "http://music.test:4533",
                                                                         "username": "demo", "password": "right one"], session: session)
            #expect(saved.status == .seeOther)
            let settings = try await client.get("/settings?music=saved", session: session)
            #expect(settings.body.contains("Your music server answered, and is saved."))
            #expect(settings.body.contains("Playlists you make go to music.test:4533 as demo."))
            #expect(!settings.body.contains("right one"), "the password is never shown back")
            // Saved again with the password left empty: the stored one is kept.
            let kept = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "http://music.test:4533",
                                                                        "username": "demo", "password": ""], session: session)
            #expect(kept.status == .seeOther)

            let page = try await client.get("/u/demo/playlist/2", session: session)
            #expect(page.status == .ok)
            #expect(page.body.contains("Make it on music.test:4533"))
            let made = try await client.post("/u/demo/playlist/2", [:], session: session)
            #expect(made.status == .ok, "\(made.body.suffix(2000))")
            let expectedSongs = albums.enumerated().filter { $0.offset != Self.missing }.reduce(0) { $0 + $1.element.tracks.count }
            #expect(made.body.contains("Made “Vinylogue — this week, 2 years ago” on music.test:4533: \(expectedSongs) songs of \(albums.count - 1) albums."),
                    "\(made.body.suffix(3000))")
            let lacking = albums[Self.missing]
            #expect(made.body.contains("Not in your library: \(lacking.album.escapedForHTML) (\(lacking.artist.escapedForHTML))."))
            let songs = library.playlists.withLock { $0.first?.songs } ?? []
            #expect(songs.count == expectedSongs)
            #expect(songs.first == "s0-0", "the chart's #1 album first, its first track played first")
            #expect(!songs.contains { $0.hasSuffix("-\(albums[0].tracks.count)") && $0.hasPrefix("s0-") }, "a song nobody played is left out")
            // Again: replaced.
            let again = try await client.post("/u/demo/playlist/2", [:], session: session)
            #expect(again.body.contains("Replaced “Vinylogue — this week, 2 years ago”"))
            #expect(library.playlists.withLock { $0.count } == 1)
            // Without the CSRF token nothing is made.
            #expect(try await client.post("/u/demo/playlist/2", [:], session: session, token: "forged").status == .forbidden)

            // An M3U8 names an mpd's own files, not a Subsonic server's.
            #expect(!page.body.contains("M3U8"))
            let m3u8 = try await client.get("/u/demo/playlist/2.m3u8", session: session)
            #expect(m3u8.status == .conflict && m3u8.body.contains("you have no mpd in Settings"), "\(m3u8.body.suffix(1500))")

            let forgotten = try await client.post("/settings/music-server", ["music": "forget"], session: session)
            #expect(forgotten.status == .seeOther)
            #expect(try await client.get("/settings?music=forgotten", session: session).body.contains("Your music server is forgotten"))
            #expect(try await client.get("/u/demo/playlist/2", session: session).body.contains("Add your music server"))
        }
    }

    /// "Every week, by itself": kept from Settings (only with a server, for
    /// 1 to 30 years back), made by the job runner on the server, its last
    /// run told on Settings, linked from the digest, and stopped.
    @Test func theWeeklyPlaylistIsKeptFromSettingsMadeByTheRunnerAndLinkedFromTheDigest() async throws {
        let library = Self.library(), mail = MailRecorder()
        let albums = Self.weekAlbums()
        try await Harness.run(demo: true, mail: mail, musicServer: library) { harness, client in
            let session = try await client.session()
            let early = try await client.post("/settings/music-server", ["music": "keep", "years": "2"], session: session)
            #expect(early.status == .conflict && early.body.contains("Add your music server first"))
            #expect(!(try await client.get("/settings", session: session).body.contains("Every week, by itself")))
            let saved = try await client.post("/settings/music-server", ["music": "save", "kind": "subsonic", "address": "http://music.test:4533",
                                                                         "username": "demo", "password": "right one"], session: session)
            #expect(saved.status == .seeOther)
            let offered = try await client.get("/settings", session: session).body
            #expect(offered.contains("Every week, by itself") && offered.contains("Keep it every week"))
            #expect(offered.contains("Keep this week, years ago, as a playlist on music.test:4533"))
            for years in ["0", "31", "two", ""] {
                let wrong = try await client.post("/settings/music-server", ["music": "keep", "years": years], session: session)
                #expect(wrong.status == .badRequest, "years \(years)")
            }
            #expect(try await client.post("/settings/music-server", ["music": "keep", "years": "2"], session: session, token: "forged").status
                == .forbidden)
            #expect(library.playlists.withLock { $0.isEmpty })

            let kept = try await client.post("/settings/music-server", ["music": "keep", "years": "2"], session: session)
            #expect(kept.status == .seeOther && kept.headers[.location] == "/settings?music=kept#music")
            await harness.idle()
            let expectedSongs = albums.enumerated().filter { $0.offset != Self.missing }.reduce(0) { $0 + $1.element.tracks.count }
            let made = library.playlists.withLock { $0 }
            #expect(made.map(\.name) == ["Vinylogue — this week, 2 years ago"])
            #expect(made.first?.songs.count == expectedSongs)
            let settings = try await client.get("/settings?music=kept", session: session).body
            #expect(settings.contains("Your weekly playlist is being made now"))
            #expect(settings.contains("music.test:4533 keeps “Vinylogue — this week, 2 years ago”: Vinylogue makes it again each time the week changes."))
            #expect(settings.contains("Last run, ") && settings.contains(
                ": Made “Vinylogue — this week, 2 years ago”: \(expectedSongs) songs of \(albums.count - 1) albums. Not in your library: "),
                "\(settings)")
            #expect(settings.contains("<option value=\"2\" selected>2 years ago</option>"))
            #expect(settings.contains("Stop making it"))

            // The digest links it.
            _ = try await DigestTests.subscribe(client, mail)
            let digest = try #require(try await mail.waitFor(2).last)
            #expect(digest.text.contains("Your music server keeps “Vinylogue — this week, 2 years ago”, made again for this week.\n"
                + "  http://127.0.0.1:8080/u/demo/playlist/2\n"), "\(digest.text)")
            #expect(try #require(digest.html).contains("href=\"http://127.0.0.1:8080/u/demo/playlist/2\" style=\"color:#8a6d3b;\">Your music server keeps"))

            let stopped = try await client.post("/settings/music-server", ["music": "stop"], session: session)
            #expect(stopped.status == .seeOther)
            let after = try await client.get("/settings?music=stopped", session: session).body
            #expect(after.contains("No playlist is kept on your server any more") && after.contains("Keep it every week"))
            #expect(!after.contains("Stop making it"))
            // Made once: stopping deletes nothing on the server.
            #expect(library.playlists.withLock { $0.count } == 1)
        }
    }
}
