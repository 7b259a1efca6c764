import VinylogueApp
import ArgumentParser
import SQLiteStore
import Stores
import Sync
import Foundation
import VinylogueCore

/// `vinylogue album USER ARTIST ALBUM`: one album's whole life in an
/// archived user's listening (`AlbumLife`), as the album page shows it.
struct AlbumLifeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "album",
        abstract: "Show one album's life in an archived user's listening: first and last played, plays per year, best week.")

    @OptionGroup var options: UserOptions

    @Argument(help: "The album's artist.")
    var artist: String

    @Argument(help: "The album's name.")
    var album: String

    @Option(help: "A day (YYYY-MM-DD) in the week to compare with the last 12 months (\"then and now\").")
    var week: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let username = try options.username()
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: options.timeZone)
            let labels = WeekLabels(timeZone: zone)
            let source = await composition.chartSource(for: username, options.source, dataDir: options.dataDir)
            guard let history = source as? any AlbumHistorySource else { throw CommandFailure(SourceError.notArchived(user: username.value)) }
            var asked: ChartWeek?
            if let week {
                guard let day = labels.parseDay(week) else {
                    throw CommandFailure("“\(week)” is not a day: give it as YYYY-MM-DD.", exitCode: .usage)
                }
                asked = LastFMWeekCalendar.week(containing: Int64(day.timeIntervalSince1970))
            }
            let life: AlbumLife?
            do {
                life = try await AlbumLife.load(user: username, artist: artist, album: album, week: asked, now: composition.clock.now,
                                                timeZone: zone, history: history)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            guard let life else {
                throw CommandFailure("\(username) never played “\(album)” by \(artist), as far as the archive knows. Check the spelling (case, accents and edition names such as “(Remastered)” do not matter; `vinylogue albums \(username)` lists what was played).",
                                     exitCode: .noData)
            }
            if json {
                Terminal.standardOutput.write(try Self.json(life) + "\n")
                return
            }
            var out = "\(life.name) — \(life.artist), in \(username)’s listening\n\n"
            let rows: [(String, String)] = [
                ("First played", labels.label(for: life.firstWeek)),
                ("Last played", labels.label(for: life.lastWeek)),
                ("Plays", "\(life.totalPlays)"),
                ("In the chart", life.weeksInChart == 1 ? "1 week" : "\(life.weeksInChart) weeks"),
                ("Best rank", "#\(life.bestRank), \(WeekLabels.plays(life.bestWeekPlays)) in \(labels.label(for: life.bestWeek))"),
            ] + (life.thenWeek.map { [("Then", "\(WeekLabels.plays(life.thenPlays ?? 0)) in \(labels.label(for: $0))")] } ?? [])
              + [("Now", "\(WeekLabels.plays(life.lastTwelveMonthsPlays)) in the last 12 months")]
            for (label, value) in rows { out += "  \(label.padding(toLength: 13, withPad: " ", startingAt: 0)) \(value)\n" }
            out += "\n  Plays per year\n"
            let most = max(1, life.years.map(\.plays).max() ?? 1)
            for year in life.years {
                let bar = String(repeating: "█", count: year.plays == 0 ? 0 : max(1, 40 * year.plays / most))
                out += "  \(year.year)  \(bar) \(year.plays)\n"
            }
            Terminal.standardOutput.write(out)
        }
    }
}

extension AlbumLifeCommand {
    /// Pretty, key-sorted JSON, as the other commands print it.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// `vinylogue rediscover USER`: albums loved around this time of year in
/// earlier years and not played in the last 12 months (`Rediscoveries`).
struct RediscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rediscover",
        abstract: "List albums played heavily around this time of year in earlier years and not at all in the last 12 months.")

    @OptionGroup var options: UserOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let username = try options.username()
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: options.timeZone)
            let labels = WeekLabels(timeZone: zone)
            let source = await composition.chartSource(for: username, options.source, dataDir: options.dataDir)
            let found: Rediscoveries
            do {
                found = try await Rediscoveries.load(user: username, now: composition.clock.now, timeZone: zone, charts: source)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            if json {
                Terminal.standardOutput.write(try AlbumLifeCommand.json(found) + "\n")
                return
            }
            var out = "Albums \(username) played at least \(Rediscoveries.minimumPlays) times within \(Rediscoveries.windowWeeks) weeks of this week "
                + "in an earlier year (\(found.yearsSearched) searched), and not once in the last 12 months:\n\n"
            guard !found.finds.isEmpty else {
                throw CommandFailure("\(username) has no forgotten favourites for this time of year: everything they loved then, they still play (or their history is short).",
                                     exitCode: .noData)
            }
            for find in found.finds {
                out += "  \(WeekLabels.plays(find.plays).leftPadded(9))  \(WeekLabels.yearsAgo(find.yearsAgo).padding(toLength: 12, withPad: " ", startingAt: 0))  \(find.artist) — \(find.name)\n"
                out += "  \(String(repeating: " ", count: 9))  best: \(WeekLabels.plays(find.bestWeekPlays)) in \(labels.label(for: find.bestWeek))\n"
            }
            Terminal.standardOutput.write(out)
        }
    }
}
