import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Stores
import Testing
import VinylogueCore

/// Editions are one album on the web as on the command line: the week's
/// page, the JSON API and the Last.fm read API chart "Tidewater" and
/// "Tidewater (Deluxe Edition)" as one album, the week's first, and the
/// album page counts the reissue's plays in the album's life.
@Suite struct EditionFoldingTests {
    static let week = ChartWeek(from: 1_657_454_400, to: 1_658_059_200)  // 10–17 July 2022

    @Test func theWeeksPageTheJSONAndTheReadAPIChartTheEditionsAsOneAlbum() async throws {
        try await Harness.run { harness, client in
            let vera = try Username("Vera")
            var listens: [Scrobble] = []
            func play(_ artist: String, _ album: String, _ count: Int, at offset: Int64) {
                for n in 0..<count {
                    listens.append(Scrobble(instant: Self.week.from + offset + Int64(n) * 600, artist: artist, album: album, track: "T\(n)"))
                }
            }
            play("Vetiver", "Tidewater", 5, at: 3_600)
            play("Vetiver", "Tidewater (Deluxe Edition)", 4, at: 86_400)
            play("Other", "Another Album", 6, at: 2 * 86_400)
            play("Vetiver", "Tidewater", 3, at: -2 * 365 * 86_400)
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens, of: vera, origin: .received)

            let api = try await client.get("/api/u/Vera/chart?week=2022-07-12")
            #expect(api.status == .ok, "\(api.body)")
            let chart = try JSONDecoder().decode(Charted.self, from: Data(api.body.utf8))
            #expect(chart.entries.map(\.name) == ["Tidewater", "Another Album"])
            #expect(chart.entries.map(\.plays) == [9, 6])

            let page = try await client.get("/u/Vera/week/2022-07-12")
            #expect(page.status == .ok)
            #expect(page.body.contains("Tidewater"))
            #expect(!page.body.contains("Deluxe Edition"), "one row for both editions")

            let read = try await client.get("/2.0/?method=user.getweeklyalbumchart&user=Vera&from=\(Self.week.from)&to=\(Self.week.to)&api_key=k&format=json")
            #expect(read.status == .ok)
            #expect(read.body.contains("\"Tidewater\"") && !read.body.contains("Deluxe Edition"), "\(read.body)")

            // The album page's life counts both editions, whichever is asked.
            let album = try await client.get("/u/Vera/album/Vetiver/Tidewater%20(Deluxe%20Edition)")
            #expect(album.status == .ok)
            #expect(album.body.contains("12 plays"), "\(album.body.count) bytes")
        }
    }

    struct Charted: Decodable {
        struct Entry: Decodable {
            let name: String
            let plays: Int
        }
        let entries: [Entry]
    }

    /// Settings' "Albums": what the rule joins is listed; turning it off
    /// counts the charts again so each spelling charts alone, and on again
    /// joins them; someone not signed in cannot change it.
    @Test func aPersonTurnsFoldingOffAndOnInSettings() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let vera = try Username("Vera")
            var listens: [Scrobble] = []
            for n in 0..<5 { listens.append(Scrobble(instant: Self.week.from + 3_600 + Int64(n) * 600, artist: "Vetiver", album: "Tidewater", track: "T\(n)")) }
            for n in 0..<4 {
                listens.append(Scrobble(instant: Self.week.from + 86_400 + Int64(n) * 600, artist: "Vetiver", album: "Tidewater (Deluxe Edition)",
                                        track: "T\(n)"))
            }
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens, of: vera, origin: .received)
            let browser = try await SignInTests.signIn(client, harness, as: "Vera")

            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("Editions of an album count as one album."), "\(settings.body)")
            #expect(settings.body.contains("href=\"/settings/albums\""))
            let preview = try await SignInTests.page(client, "/settings/albums", browser)
            #expect(preview.status == .ok)
            #expect(preview.body.contains("One album of yours was played under several spellings"), "\(preview.body)")
            #expect(preview.body.contains("“Tidewater (Deluxe Edition)”: 4 plays"))

            let off = try await client.post("/settings/albums", ["editions": "off"], session: browser.form)
            #expect(off.status == .seeOther, "\(off.body)")
            #expect(off.headers[.location] == "/settings?albums=off#albums")
            await harness.idle()
            var chart = try await client.get("/api/u/Vera/chart?week=2022-07-12")
            #expect(chart.body.contains("Tidewater (Deluxe Edition)"), "\(chart.body)")
            let turnedOff = try await SignInTests.page(client, "/settings?albums=off", browser)
            #expect(turnedOff.body.contains("Every spelling counts as its own album now."))
            #expect(turnedOff.body.contains("Treat editions of an album as one"))

            let on = try await client.post("/settings/albums", ["editions": "on"], session: browser.form)
            #expect(on.headers[.location] == "/settings?albums=on#albums")
            await harness.idle()
            chart = try await client.get("/api/u/Vera/chart?week=2022-07-12")
            #expect(!chart.body.contains("Deluxe Edition"), "\(chart.body)")
            let decoded = try JSONDecoder().decode(Charted.self, from: Data(chart.body.utf8))
            #expect(decoded.entries.map(\.plays) == [9])

            // A forged form changes nothing; a visitor is asked to sign in.
            let forged = try await client.post("/settings/albums", ["editions": "off"], session: browser.form, token: "forged")
            #expect(forged.status == .forbidden)
            let visitor = try await client.session(from: "/")
            let anonymous = try await client.post("/settings/albums", ["editions": "off"], session: visitor)
            #expect(anonymous.status != .seeOther)
            #expect(try await SQLiteScrobbleStore(database: harness.database).albumFolding(of: vera) == .editions)
        }
    }

    /// "Also played as" on one's own album page: keep a spelling apart,
    /// join an album the rule missed (picked from one's own albums), undo
    /// each on the page or in Settings; the charts follow once counted.
    /// Nobody else sees the section or can make a choice.
    @Test func aPersonKeepsASpellingApartJoinsAnAlbumAndUndoesBoth() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let vera = try Username("Vera")
            var listens: [Scrobble] = []
            func play(_ artist: String, _ album: String, _ count: Int, at offset: Int64) {
                for n in 0..<count {
                    listens.append(Scrobble(instant: Self.week.from + offset + Int64(n) * 600, artist: artist, album: album, track: "T\(n)"))
                }
            }
            play("Vetiver", "Tidewater", 5, at: 3_600)
            play("Vetiver", "Tidewater (Deluxe Edition)", 4, at: 86_400)
            play("Radiohead", "OK Computer", 3, at: 2 * 86_400)
            play("Radiohead", "OKNOTOK 1997 2017", 2, at: 3 * 86_400)
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens, of: vera, origin: .received)
            let browser = try await SignInTests.signIn(client, harness, as: "Vera")
            func plays() async throws -> [String: Int] {
                let chart = try await client.get("/api/u/Vera/chart?week=2022-07-12")
                let entries = try JSONDecoder().decode(Charted.self, from: Data(chart.body.utf8)).entries
                return Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.plays) })
            }
            #expect(try await plays() == ["Tidewater": 9, "OK Computer": 3, "OKNOTOK 1997 2017": 2])

            // Anyone else sees the album without the section.
            let visitor = try await client.session(from: "/")
            let seen = try await client.get("/u/Vera/album/Vetiver/Tidewater", session: visitor)
            #expect(seen.status == .ok)
            #expect(!seen.body.contains("Also played as"))

            let page = try await SignInTests.page(client, "/u/Vera/album/Vetiver/Tidewater", browser)
            #expect(page.body.contains("Also played as"), "\(page.body)")
            #expect(page.body.contains("“Tidewater (Deluxe Edition)”: 4 plays</span>"))
            #expect(page.body.contains(">Keep apart</button>"))
            // An album only ever played under its own name says so, not a list of one.
            let single = try await SignInTests.page(client, "/u/Vera/album/Radiohead/OK%20Computer", browser)
            #expect(single.body.contains("Never under another name."), "\(single.body)")
            #expect(!single.body.contains("<ul class=\"spellings\">"))
            #expect(single.body.contains("Same album as…"))

            let apart = try await client.post("/settings/albums/choices", ["action": "apart", "artist": "Vetiver", "album": "Tidewater (Deluxe Edition)",
                                                                           "back": "/u/Vera/album/Vetiver/Tidewater#spellings"], session: browser.form)
            #expect(apart.status == .seeOther, "\(apart.body)")
            #expect(apart.headers[.location] == "/u/Vera/album/Vetiver/Tidewater?choice=apart#spellings")
            await harness.idle()
            #expect(try await plays() == ["Tidewater": 5, "Tidewater (Deluxe Edition)": 4, "OK Computer": 3, "OKNOTOK 1997 2017": 2])
            let after = try await SignInTests.page(client, "/u/Vera/album/Vetiver/Tidewater?choice=apart", browser)
            #expect(after.body.contains("Kept apart. Your charts are being counted again"))
            #expect(after.body.contains("“Tidewater (Deluxe Edition)” by Vetiver is kept apart from this album."), "\(after.body)")

            // "Same album as…" offers her other albums by the artist.
            let same = try await SignInTests.page(client, "/settings/albums/same?artist=Radiohead&album=OKNOTOK%201997%202017", browser)
            #expect(same.status == .ok)
            #expect(same.body.contains("Your other albums by Radiohead"))
            #expect(same.body.contains("value=\"OK Computer\""))
            // An album she never played is refused with a sentence.
            let unknown = try await client.post("/settings/albums/choices", ["action": "join", "artist": "Radiohead", "album": "OKNOTOK 1997 2017",
                                                                             "to_artist": "Radiohead", "to_album": "Kid A"], session: browser.form)
            #expect(unknown.status == .unprocessableContent)
            #expect(unknown.body.contains("There is no album “Kid A” by Radiohead in your listening."))
            let join = try await client.post("/settings/albums/choices", ["action": "join", "artist": "Radiohead", "album": "OKNOTOK 1997 2017",
                                                                          "to_artist": "Radiohead", "to_album": "OK Computer",
                                                                          "back": "/u/Vera/album/Radiohead/OKNOTOK%201997%202017#spellings"],
                                             session: browser.form)
            #expect(join.headers[.location] == "/u/Vera/album/Radiohead/OK%20Computer?choice=joined#spellings")
            await harness.idle()
            #expect(try await plays() == ["Tidewater": 5, "Tidewater (Deluxe Edition)": 4, "OK Computer": 5])

            // Settings lists both; undo each there.
            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("“OKNOTOK 1997 2017” by Radiohead is counted as “OK Computer”."), "\(settings.body)")
            let choices = try await SQLiteScrobbleStore(database: harness.database).albumChoices(of: vera)
            #expect(choices.count == 2)
            for choice in choices {
                let undo = try await client.post("/settings/albums/choices", ["action": "undo", "kind": choice.kind.rawValue, "key": choice.key,
                                                                              "back": "/settings#albums"], session: browser.form)
                #expect(undo.headers[.location] == "/settings?albums=undone#albums")
            }
            await harness.idle()
            #expect(try await plays() == ["Tidewater": 9, "OK Computer": 3, "OKNOTOK 1997 2017": 2])

            // A form never sends anyone elsewhere; a visitor or a forged form changes nothing.
            let elsewhere = try await client.post("/settings/albums/choices", ["action": "apart", "artist": "Vetiver", "album": "Tidewater (Deluxe Edition)",
                                                                               "back": "https://example.com/u/Vera/album/x"], session: browser.form)
            #expect(elsewhere.headers[.location] == "/settings?albums=apart#albums")
            let forged = try await client.post("/settings/albums/choices", ["action": "undo", "kind": "apart", "key": "x"], session: browser.form,
                                               token: "forged")
            #expect(forged.status == .forbidden)
            let anonymous = try await client.post("/settings/albums/choices", ["action": "apart", "artist": "Radiohead", "album": "OK Computer"],
                                                  session: visitor)
            #expect(anonymous.status != .seeOther)
            #expect(try await SQLiteScrobbleStore(database: harness.database).albumChoices(of: vera).count == 1)

            // Only albums she played, named without control characters (a NUL would cut a name short).
            let ghost = try await client.post("/settings/albums/choices", ["action": "apart", "artist": "Nobody", "album": "Ghost"], session: browser.form)
            #expect(ghost.status == .badRequest)
            #expect(ghost.body.contains("That album is not in your listening."))
            let blank = try await client.post("/settings/albums/choices", ["action": "join", "artist": "", "album": " ", "to_artist": "Vetiver",
                                                                           "to_album": "Tidewater"], session: browser.form)
            #expect(blank.status == .badRequest)
            let nul = try await client.post("/settings/albums/choices", ["action": "join", "artist": "Radiohead", "album": "OK Computer",
                                                                         "to_artist": "Vetiver", "to_album": "Tidewater\u{0}junk"], session: browser.form)
            #expect(nul.status == .badRequest)
            #expect(nul.body.contains("cannot hold control characters"))
            // A way back is ASCII, as every address of hers is.
            let unicodeBack = try await client.post("/settings/albums/choices", ["action": "undo", "kind": "apart", "key": "nothing",
                                                                                 "back": "/u/Vera/album/Vetiver/Tidewater\u{2028}"], session: browser.form)
            #expect(unicodeBack.headers[.location] == "/settings?albums=same#albums")
            #expect(try await SQLiteScrobbleStore(database: harness.database).albumChoices(of: vera).count == 1)
        }
    }

    /// "Same album as…" on an album another was joined into (and played
    /// more as that other's spelling) joins the album itself: both move.
    @Test func sameAlbumAsJoinsTheAlbumNotTheSpellingJoinedIntoIt() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let vera = try Username("Vera")
            var listens: [Scrobble] = []
            func play(_ album: String, _ count: Int, at offset: Int64) {
                for n in 0..<count {
                    listens.append(Scrobble(instant: Self.week.from + offset + Int64(n) * 600, artist: "Radiohead", album: album, track: "T\(n)"))
                }
            }
            play("OK Computer", 2, at: 3_600)
            play("OKNOTOK 1997 2017", 4, at: 86_400)
            play("Kid A", 1, at: 2 * 86_400)
            let store = SQLiteScrobbleStore(database: harness.database)
            _ = try await store.store(listens, of: vera, origin: .received)
            #expect(try await store.changeAlbums(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead", toAlbum: "OK Computer"),
                                                 of: vera, at: harness.clock.now))
            await harness.idle()
            let browser = try await SignInTests.signIn(client, harness, as: "Vera")
            let same = try await SignInTests.page(client, "/settings/albums/same?artist=Radiohead&album=OK%20Computer", browser)
            #expect(same.body.contains("Which of your albums is “OK Computer” by Radiohead?"), "\(same.body)")
            #expect(same.body.contains("name=\"album\" value=\"OK Computer\""))
            #expect(!same.body.contains("name=\"album\" value=\"OKNOTOK 1997 2017\""))
            let join = try await client.post("/settings/albums/choices", ["action": "join", "artist": "Radiohead", "album": "OK Computer",
                                                                          "to_artist": "Radiohead", "to_album": "Kid A"], session: browser.form)
            #expect(join.status == .seeOther)
            await harness.idle()
            let chart = try await client.get("/api/u/Vera/chart?week=2022-07-12")
            let entries = try JSONDecoder().decode(Charted.self, from: Data(chart.body.utf8)).entries
            #expect(entries.map(\.plays) == [7], "\(chart.body)")
        }
    }

    /// Listens of two spellings that carry one MusicBrainz release are one
    /// album on the web; the album page says which spelling is there by
    /// its release, and "Keep apart" takes it out.
    @Test func spellingsOfOneReleaseAreOneAlbumAndTheirPageSaysWhy() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let vera = try Username("Vera"), release = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29"
            var listens: [Scrobble] = []
            func play(_ album: String, _ count: Int, at offset: Int64) {
                for n in 0..<count {
                    listens.append(Scrobble(instant: Self.week.from + offset + Int64(n) * 600, artist: "Radiohead", album: album, track: "T\(n)",
                                            albumMBID: release))
                }
            }
            play("OK Computer", 2, at: 3_600)
            play("OK Computer OKNOTOK 1997 2017", 3, at: 86_400)
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens, of: vera, origin: .received)
            await harness.idle()
            func plays() async throws -> [Int] {
                let chart = try await client.get("/api/u/Vera/chart?week=2022-07-12")
                return try JSONDecoder().decode(Charted.self, from: Data(chart.body.utf8)).entries.map(\.plays)
            }
            #expect(try await plays() == [5])
            let browser = try await SignInTests.signIn(client, harness, as: "Vera")
            let page = try await SignInTests.page(client, "/u/Vera/album/Radiohead/OK%20Computer", browser)
            // Named as it was played most; the other spelling is here by its release.
            #expect(page.body.contains("“OK Computer OKNOTOK 1997 2017”: 3 plays</span>\n        <form"), "\(page.body)")
            #expect(page.body.contains("“OK Computer”: 2 plays\n        <span class=\"hint\">the same MusicBrainz release</span></span>"),
                    "\(page.body)")
            let apart = try await client.post("/settings/albums/choices", ["action": "apart", "artist": "Radiohead",
                                                                           "album": "OK Computer OKNOTOK 1997 2017"], session: browser.form)
            #expect(apart.status == .seeOther)
            await harness.idle()
            #expect(try await plays() == [3, 2])
        }
    }
}
