import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore

@Suite struct ArchiveServingTests {
    /// Scrobbles of the week 5–12 July 2020 for a user Last.fm has never heard of.
    func fill(_ harness: Harness, user: Username) async throws {
        let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
        var scrobbles: [Scrobble] = []
        for i in 0..<5 { scrobbles.append(Scrobble(instant: week.from + Int64(i) * 600, artist: "Local Artist", album: "Offline Album", track: "T\(i)")) }
        scrobbles.append(Scrobble(instant: week.from + 9000, artist: "local artist", album: "OFFLINE ALBUM", track: "T9"))
        scrobbles.append(Scrobble(instant: week.from - 364 * 86400 + 60, artist: "Older", album: "Last Year", track: "X"))
        try await SQLiteScrobbleStore(database: harness.database).store(scrobbles, of: user, origin: .lastFMExport)
    }

    @Test func archivedUsersAreChartedOffline() async throws {
        try await Harness.run { harness, client in
            let user = try Username("offliner")
            try await fill(harness, user: user)
            let page = try await client.get("/u/offliner/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["Local Artist", "Offline Album", "6 plays"]))
            #expect(await harness.fake.requests().isEmpty)
            let api = try await client.get("/api/u/offliner/chart?week=2020-07-08")
            #expect(api.body.contains("\"plays\" : 6"))
        }
    }

    /// Someone whose history is only in the archive (an import; Last.fm
    /// does not know the name, or no API key is set) is added to the list
    /// under the name it was stored with, without asking Last.fm.
    @Test func anArchivedUserIsAddedToTheListWithoutLastFM() async throws {
        try await Harness.run { harness, client in
            try await fill(harness, user: try Username("Offliner"))
            let session = try await client.session()
            let added = try await client.post("/users", ["username": "offliner"], session: session)
            #expect(added.status == .seeOther, "\(added.body.suffix(1500))")
            #expect(try await harness.lists.users().map(\.name) == ["Offliner"])
            #expect(await harness.fake.requests().isEmpty, "Last.fm was asked")
        }
    }

    /// Names are kept as scrobbled, control characters too; a page shows
    /// them made visible (U+FFFD), never as a NUL or an escape sequence
    /// handed to the browser (the probe found them raw).
    @Test func controlCharactersInNamesReachNoPage() async throws {
        try await Harness.run { harness, client in
            let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
            try await SQLiteScrobbleStore(database: harness.database).store(
                (0..<3).map { Scrobble(instant: week.from + Int64($0) * 600, artist: "Ctrl\u{1}\u{1B}[31mRed\u{7}", album: "Alb\u{0}Null\u{85}",
                                       track: "T\u{C}\($0)") }, of: try Username("glitch"), origin: .lastFMExport)
            let page = try await client.get("/u/glitch/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.contains("Ctrl\u{FFFD}\u{FFFD}[31mRed\u{FFFD}") && page.body.contains("Alb\u{FFFD}Null\u{FFFD}"), "\(page.body.suffix(3000))")
            #expect(!page.body.unicodeScalars.contains { ($0.value < 0x20 && ![9, 10, 13].contains($0.value)) || (0x7F...0x9F).contains($0.value) })
            // Kept as scrobbled.
            let api = try await client.get("/api/u/glitch/chart?week=2020-07-08")
            #expect(api.body.contains("Ctrl\\u0001\\u001b[31mRed\\u0007"), "\(api.body.prefix(1500))")
        }
    }

    /// A user row without scrobbles (a sync that failed before storing its
    /// first page) must not hide the user's Last.fm charts.
    @Test func anEmptyArchiveEntryDoesNotShadowLastFM() async throws {
        try await Harness.run { harness, client in
            try await SQLiteScrobbleStore(database: harness.database).store([], of: try Username("ybsc"), origin: .lastFMSync)
            let page = try await client.get("/u/ybsc/week/2020-07-08")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["PUP", "Live at The Electric Ballroom", "22 plays"]))
        }
    }

    /// A row with an absurd time (stored before imports checked times)
    /// used to trap on overflow and take the whole server down.
    @Test func aDamagedRowNeitherCrashesNorStretchesPages() async throws {
        try await Harness.run { harness, client in
            let bomb = try Username("bomb")
            try await fill(harness, user: bomb)
            try await SQLiteScrobbleStore(database: harness.database).store(
                [Int64.max, 1_000_000_000_000_000_000, -1].map { Scrobble(instant: $0, artist: "A", album: "B", track: "D") },
                of: bomb, origin: .lastFMExport)
            let page = try await client.get("/u/bomb/week/2020-07-06")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["Local Artist", "Offline Album", "6 plays"]))
            #expect(try await client.get("/u/bomb").status == .ok)
            #expect(try await client.get("/u/bomb/history").status == .ok)
            #expect(try await client.get("/api/u/bomb/chart?week=2020-07-06").body.contains("\"plays\" : 6"))
        }
    }

    @Test func historyShowsEveryYearFromTheArchive() async throws {
        try await Harness.run { harness, client in
            try await fill(harness, user: try Username("offliner"))
            let page = try await client.get("/u/offliner/history")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["3 years ago", "Offline Album", "4 years ago", "Last Year"]))
            #expect(await harness.fake.requests().isEmpty)
        }
    }

    @Test func historyWorksFromLastFMToo() async throws {
        try await Harness.run { _, client in
            let page = try await client.get("/u/ybsc/history")
            #expect(page.status == .ok)
            #expect(page.body.containsInOrder(["3 years ago", "Week 28 · Jul 5 – 12, 2020", "PUP", "Live at The Electric Ballroom"]))
            #expect(page.body.contains("and 8 more"))
            let unknown = try await client.get("/u/nosuchuser/history")
            #expect(unknown.status == .notFound)
        }
    }
}
