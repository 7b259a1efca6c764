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
}
