import SQLiteStore
import Stores
import Sync
import Foundation
import VinylogueCore

extension BenchCommand {
    /// Times the album page's life of an album (`AlbumLife`, for the #1
    /// album of 50 weeks spread over the history, each week's of the next
    /// person in turn) and rediscover (`Rediscoveries`, 20 runs across the
    /// people), and prints their figures.
    static func benchAlbumPages(_ source: ArchiveChartSource, users: [Username], weeks: [ChartWeek], now: Date) async throws {
        let clock = ContinuousClock()
        var albums: [(Username, String, String)] = []
        for (index, week) in stride(from: 0, to: weeks.count, by: max(1, weeks.count / 50)).map({ weeks[$0] }).enumerated() {
            let user = users[index % users.count]
            if let top = try await source.chart(for: user, kind: .album, week: week).entries.first { albums.append((user, top.artist, top.name)) }
        }
        var life: [Double] = []
        var weeksInChart = 0
        for round in 0..<3 {
            for (user, artist, name) in albums {
                let begin = clock.now
                let found = try await AlbumLife.load(user: user, artist: artist, album: name, week: nil, now: now, timeZone: .gmt,
                                                     history: source)
                if round > 0 { life.append(seconds(clock.now - begin) * 1000) }
                weeksInChart = max(weeksInChart, found?.weeksInChart ?? 0)
            }
        }
        life.sort()
        print("Album life (\(albums.count) albums ×2, up to \(weeksInChart) weeks each): p50 \(format(percentile(life, 0.5), 2)) ms, "
            + "p99 \(format(percentile(life, 0.99), 2)) ms")
        var rediscover: [Double] = []
        var finds = 0
        for run in 0..<20 {
            let user = users[run % users.count]
            let begin = clock.now
            finds = try await Rediscoveries.load(user: user, now: now, timeZone: .gmt, charts: source).finds.count
            rediscover.append(seconds(clock.now - begin) * 1000)
        }
        rediscover.sort()
        print("Rediscover (\(finds) albums found): p50 \(format(percentile(rediscover, 0.5), 2)) ms, max \(format(rediscover.last ?? 0, 2)) ms")
    }
}
