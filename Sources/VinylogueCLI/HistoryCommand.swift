import VinylogueApp
import ArgumentParser
import Archive
import Foundation
import VinylogueCore

/// `vinylogue history USER`: this week in every earlier year, from the archive.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show the top albums of this same week in every earlier year (from the local archive).")

    @Argument(help: "A username with an archive (import or sync first; `demo` is built in).")
    var user: String

    @Option(help: "Rows per year.")
    var limit = 5

    @Option(help: "album, artist or track.")
    var kind: ChartKind = .album

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar years are counted (default: the system's).")
    var timeZone: String?

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: timeZone)
            let result: EveryYearChart
            do {
                let store = try composition.openArchive(dataDir: dataDir)
                try composition.fillDemo(for: username, in: store)
                result = try await ArchiveChartSource(store: store)
                    .everyYear(for: username, kind: kind, limit: limit, now: composition.clock.now, timeZone: zone)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            let labels = WeekLabels(timeZone: zone)
            if json {
                let years: [[String: Any]] = result.years.map { year in
                    ["yearsAgo": year.yearsAgo, "year": labels.year(of: year.week.fromDate),
                     "week": ["from": year.week.from, "to": year.week.to],
                     "entries": year.entries.map { ["rank": $0.rank, "artist": $0.artist, "name": $0.name, "plays": $0.plays] }]
                }
                let data = try JSONSerialization.data(withJSONObject: ["user": username.value, "kind": kind.rawValue, "years": years],
                                                      options: [.prettyPrinted, .sortedKeys])
                Terminal.standardOutput.write(String(decoding: data, as: UTF8.self) + "\n")
                return
            }
            guard !result.years.isEmpty else {
                throw CommandFailure("\(username) has no archived scrobbles in this week of any earlier year.", exitCode: .noData)
            }
            var out = ""
            for year in result.years {
                out += "\(WeekLabels.yearsAgo(year.yearsAgo)) · \(labels.label(for: year.week))\n"
                for entry in year.entries {
                    let name = kind == .artist ? entry.artist : "\(entry.artist) — \(entry.name)"
                    out += "  \(String(entry.rank).leftPadded(2))  \(WeekLabels.plays(entry.plays).leftPadded(9))  \(name)\n"
                }
                out += "\n"
            }
            Terminal.standardOutput.write(out)
        }
    }
}
