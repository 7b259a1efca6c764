import Foundation
import Testing

/// `vinylogue chart` and `history` follow the web app's rule for where a
/// user's charts come from: the archive for anyone with scrobbles in it.
@Suite struct SourceRuleTests {
    /// Three albums in the Last.fm week of 6–13 July 2020, as a Last.fm CSV export.
    static let export = """
        uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid
        1594080000,07 Jul 2020 00:00,Radiohead,,OK Computer,,Airbag,
        1594080300,07 Jul 2020 00:05,Radiohead,,OK Computer,,Paranoid Android,
        1594166400,08 Jul 2020 00:00,Björk,,Homogenic,,Jóga,
        1594252800,09 Jul 2020 00:00,Radiohead,,OK Computer,,Lucky,
        1594339200,10 Jul 2020 00:00,Low,,Things We Lost in the Fire,,Sunflower,

        """

    /// Used to fail: without `--source archive` the chart of an imported
    /// user went to Last.fm (and, with no key, exited 4).
    @Test func anImportedUserIsChartedFromTheArchiveWithNoKeyAndNoNetwork() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-rule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = directory.appendingPathComponent("scrobbles.csv")
        try Self.export.write(to: csv, atomically: true, encoding: .utf8)
        let data = directory.appendingPathComponent("data").path
        // Nothing listens on port 9: any Last.fm request would fail.
        let offline = ["LASTFM_API_URL": "http://127.0.0.1:9/2.0/"]
        let imported = try await vinylogue(["import", csv.path, "--user", "Archivist", "--data-dir", data], environment: offline)
        #expect(imported.status == 0, "\(imported.stderr)")

        let chart = try await vinylogue(["chart", "Archivist", "--week", "2020-07-08", "--json", "--data-dir", data], environment: offline)
        #expect(chart.status == 0, "\(chart.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(chart.stdout.utf8)) as? [String: Any])
        let entries = try #require(json["entries"] as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["OK Computer", "Homogenic", "Things We Lost in the Fire"])
        #expect(entries.first?["plays"] as? Int == 3)

        // Someone never imported still goes to Last.fm, which says no key is set.
        let stranger = try await vinylogue(["chart", "Stranger", "--week", "2020-07-08", "--data-dir", data], environment: offline)
        #expect(stranger.status == 4, "\(stranger.stdout) \(stranger.stderr)")
    }

    /// Used to fail: `history` read only the archive, so a user the web
    /// app's every-year page shows from Last.fm was "not archived" here.
    @Test func historyFollowsTheSameRuleAsTheWebApp() async throws {
        try await withFakeEnvironment { _, original in
            // Every year's chart of RJ, twice: at Last.fm's 5 a second that
            // was 7 s of waiting, and the pace is not what this is about.
            let env = original.merging(["LASTFM_REQUESTS_PER_SECOND": "50"]) { $1 }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-rule-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let run = try await vinylogue(["history", "RJ", "--limit", "2", "--data-dir", directory.path], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("1 year ago · Week "), "\(run.stdout)")
            #expect(run.stdout.contains("2 years ago · Week "))

            // The same page as JSON, from one Codable view.
            struct Printed: Decodable {
                struct Year: Decodable {
                    struct Week: Decodable { let from: Int64; let to: Int64 }
                    struct Entry: Decodable { let rank: Int; let artist: String; let name: String; let plays: Int }
                    let yearsAgo: Int; let year: Int; let week: Week; let entries: [Entry]
                }
                let user: String; let kind: String; let years: [Year]
            }
            let json = try await vinylogue(["history", "RJ", "--limit", "2", "--json", "--data-dir", directory.path], environment: env)
            #expect(json.status == 0, "\(json.stderr)")
            let printed = try JSONDecoder().decode(Printed.self, from: Data(json.stdout.utf8))
            #expect(printed.user == "RJ" && printed.kind == "album")
            #expect(printed.years.map(\.yearsAgo).prefix(2) == [1, 2])
            for year in printed.years {
                #expect(year.week.to - year.week.from == 7 * 86_400)
                #expect((1...2).contains(year.entries.count))
                #expect(year.entries.first?.rank == 1)
            }
        }
    }
}
