import SQLiteStore
import Stores
import Sync
import Foundation
import VinylogueCore

extension BenchCommand {
    /// Times the album page's life of an album and its owner's "Also
    /// played as" (`AlbumLife`, `albumSpellings`, for the #1
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
        // The owner's "Also played as": every spelling of the album in its weeks.
        var spellings: [Double] = []
        var most = 0
        for (user, artist, name) in albums {
            let begin = clock.now
            let found = try await source.store.albumSpellings(of: user, artist: artist, album: name)
            spellings.append(seconds(clock.now - begin) * 1000)
            most = max(most, found?.spellings.count ?? 0)
        }
        spellings.sort()
        print("Also played as (\(albums.count) albums, up to \(most) spellings): p50 \(format(percentile(spellings, 0.5), 2)) ms, "
            + "max \(format(spellings.last ?? 0, 2)) ms")
        // A year's page: every calendar year of the first person's history, cold.
        var yearReads: [Double] = []
        if let span = try await source.store.span(for: users[0]) {
            let first = ListeningYear.year(of: span.lowerBound, in: .gmt), last = ListeningYear.year(of: span.upperBound, in: .gmt)
            for year in first...last {
                guard let calendarYear = ListeningYear(year, timeZone: .gmt) else { continue }
                let begin = clock.now
                _ = try await source.store.yearInReview(of: users[0], in: calendarYear)
                yearReads.append(seconds(clock.now - begin) * 1000)
            }
        }
        yearReads.sort()
        print("A year in review (\(yearReads.count) years, each read cold from the archive): p50 \(format(percentile(yearReads, 0.5), 2)) ms, "
            + "max \(format(yearReads.last ?? 0, 2)) ms")
        // Anniversaries and rituals of 20 weeks across the last year, cold.
        var moments: [Double] = []
        var found = 0
        for n in 0..<20 {
            let when = now.addingTimeInterval(-Double(n) * 18 * 86_400)
            let begin = clock.now
            let anniversaries = try await source.store.anniversaries(of: users[n % users.count], now: when, timeZone: .gmt)
            moments.append(seconds(clock.now - begin) * 1000)
            found += (anniversaries?.milestones.count ?? 0) + (anniversaries?.rituals.count ?? 0)
        }
        moments.sort()
        print("Anniversaries and rituals of a week (20 weeks, \(found) found): p50 \(format(percentile(moments, 0.5), 2)) ms, "
            + "max \(format(moments.last ?? 0, 2)) ms")
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

extension BenchCommand {
    /// Times turning "editions as one album" off and on again for `user`
    /// (the choice recorded, then every week counted again in slices, as
    /// the job does, though not fenced by one), while weekly charts are read meanwhile as pages
    /// would read them; prints each count's time and the reads' latency.
    static func benchRefolding(_ archive: any ScrobbleArchive, user: Username, weeks: [ChartWeek], now: Date) async throws {
        let clock = ContinuousClock()
        let source = ArchiveChartSource(store: archive)
        for folding in [AlbumFolding.asSpelled, .editions] {
            _ = try await archive.chooseAlbumFolding(folding, of: user, at: now)
            let counting = Task {
                let begin = clock.now
                var slices = 0
                while try await archive.countAgain(user, under: nil, at: now) { slices += 1 }
                return (seconds(clock.now - begin), slices)
            }
            // Pages meanwhile: a week's chart after another, until the count ends.
            let reading = Task {
                var latencies: [Double] = []
                var index = 0
                while !Task.isCancelled, !weeks.isEmpty {
                    let begin = clock.now
                    do {
                        _ = try await source.chart(for: user, kind: .album, week: weeks[(index * 7919) % weeks.count])
                    } catch {
                        // The read cut short by the count's end is not measured.
                        if Task.isCancelled { break }
                        throw error
                    }
                    latencies.append(seconds(clock.now - begin) * 1000)
                    index += 1
                }
                return latencies
            }
            let (took, slices) = try await counting.value
            reading.cancel()
            let latencies = try await reading.value.sorted()
            let name = folding.foldsEditions ? "on again" : "off"
            print("Editions as one album \(name): every week counted again in \(format(took, 2)) s (\(slices) slices of "
                + "\(ChartRecount.weeksPerSlice) weeks); \(latencies.count) weekly charts read meanwhile: p50 "
                + "\(format(percentile(latencies, 0.5), 3)) ms, p99 \(format(percentile(latencies, 0.99), 3)) ms")
        }
    }
}
