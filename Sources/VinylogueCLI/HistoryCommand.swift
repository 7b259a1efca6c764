import VinylogueApp
import ArgumentParser
import SQLiteStore
import Stores
import Sync
import Foundation
import VinylogueCore

/// `vinylogue history USER`: this week in every earlier year, from where the
/// web app's every-year page reads it (`ListeningSources`: the archive when
/// it holds the user, else Last.fm), through the same presenter.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show the top albums of this same week in every earlier year (from the archive when it has the user, else Last.fm).")

    @Argument(help: "A Last.fm username (archived users need no network; `demo` is built in).")
    var user: String

    @Option(help: "Rows per year.")
    var limit = 5

    @Option(help: "album, artist or track.")
    var kind: ChartKind = .album

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar years are counted (default: the system's).")
    var timeZone: String?

    @Option(help: "Where to read listening data: \(SourceChoice.allCases.map(\.rawValue).joined(separator: ", ")). Default: the archive for anyone with scrobbles in it (and `demo`), else lastfm. `demo` also charts the demo's friends: theo, mara, felix and june.")
    var source: SourceChoice?

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
            let source = await composition.chartSource(for: username, self.source, dataDir: dataDir)
            let asked = EveryYearPage.Request(user: username, kind: kind, rowsPerYear: max(1, limit), timeZone: zone)
            let page = await EveryYearPage.load(asked, from: source, now: composition.clock.now)
            if let failure = page.failure { throw CommandFailure(failure) }
            if json {
                let data = EveryYearJSONView(page, timeZone: zone).data()
                Terminal.standardOutput.write(String(decoding: data, as: UTF8.self) + "\n")
                return
            }
            guard !page.years.isEmpty else {
                throw CommandFailure("\(username) has no chart for this week in any earlier year.", exitCode: .noData)
            }
            var out = ""
            for year in page.years {
                out += "\(year.yearsAgoLabel) · \(year.weekLabel)\n"
                for row in year.rows {
                    let name = kind == .artist ? row.artist : "\(row.artist) — \(row.name)"
                    out += "  \(String(row.rank).leftPadded(2))  \(row.playsLabel.leftPadded(9))  \(name)\n"
                }
                out += "\n"
            }
            Terminal.standardOutput.write(out)
        }
    }
}
