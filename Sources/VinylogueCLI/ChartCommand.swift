import VinylogueApp
import ArgumentParser
import Foundation
import VinylogueCore

extension SourceChoice: ExpressibleByArgument {}
extension ChartKind: ExpressibleByArgument {}

/// Options shared by the commands that look at one user.
struct UserOptions: ParsableArguments {
    @Argument(help: "A Last.fm username (the user `demo` is built in).")
    var user: String

    @Option(help: "Where to read listening data: \(SourceChoice.allCases.map(\.rawValue).joined(separator: ", ")). Default: the archive for anyone with scrobbles in it (and `demo`), else lastfm. `demo` also charts the demo's friends: theo, mara, felix and june.")
    var source: SourceChoice?

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar years are counted (default: the system's).")
    var timeZone: String?

    @Option(name: .customLong("data-dir"), help: "The archive's data directory for --source archive (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    func username() throws -> Username {
        do { return try Username(user) } catch {
            throw CommandFailure("“\(user)” is not a valid Last.fm username: \(error.description)", exitCode: .usage)
        }
    }
}

/// `vinylogue chart USER`: the chart for this week N years ago.
struct ChartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chart",
        abstract: "Print a user's weekly chart for this same week, N years ago.")

    @OptionGroup var options: UserOptions

    @Option(name: .customLong("years-ago"), help: "How many years back (1 or more). Default: 1.")
    var yearsAgo: Int?

    @Option(help: "Show the chart week that contains this date (YYYY-MM-DD) instead.")
    var week: String?

    @Option(help: "album, artist or track.")
    var kind: ChartKind = .album

    @Option(name: .customLong("min-plays"), help: "Hide rows with this many plays or fewer (0: show all).")
    var minPlays: Int = 0

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        if yearsAgo != nil && week != nil { throw ValidationError("Use either --years-ago or --week, not both.") }
        if let yearsAgo, yearsAgo < 1 { throw ValidationError("--years-ago must be 1 or more.") }
        if minPlays < 0 { throw ValidationError("--min-plays must be 0 or more.") }
    }

    func run() async throws {
        let user = try options.username()
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: options.timeZone)
            let selection: WeekSelection
            if let week {
                guard let date = WeekLabels(timeZone: zone).parseDay(week) else {
                    throw CommandFailure("“\(week)” is not a date; use the form YYYY-MM-DD, for example 2020-07-08.", exitCode: .usage)
                }
                selection = .containing(date)
            } else {
                selection = .yearsAgo(yearsAgo ?? 1)
            }
            let request = WeeklyChartPage.Request(user: user, kind: kind, selection: selection,
                                                  filter: PlayCountFilter(threshold: minPlays), timeZone: zone)
            let page = await WeeklyChartPage.load(request, from: await composition.chartSource(for: user, options.source, dataDir: options.dataDir), now: composition.clock.now)
            try Self.print(page, json: json, colour: composition.allowsColour(on: .standardOutput))
        }
    }

    /// Prints `page`, or throws the failure it carries.
    static func print(_ page: WeeklyChartPage, json: Bool, colour: Bool) throws {
        switch page.state {
        case .failed(let error):
            throw CommandFailure(error)
        case .noChart(let message):
            throw CommandFailure(message + " Try `vinylogue years \(page.user)` to see which years have charts.", exitCode: .noData)
        case .chart, .empty:
            if json {
                Terminal.standardOutput.write(String(decoding: ChartJSONView(page).data(), as: UTF8.self) + "\n")
            } else {
                Terminal.standardOutput.write(ChartTableView(colour: colour).render(page))
            }
        }
    }
}

/// `vinylogue years USER`: which earlier years have a chart for this week.
struct YearsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "years",
        abstract: "List the earlier years that have a chart for this week.")

    @OptionGroup var options: UserOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        let user = try options.username()
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: options.timeZone)
            let list: ChartWeekList
            do {
                list = try await (await composition.chartSource(for: user, options.source, dataDir: options.dataDir)).chartList(for: user)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            let now = composition.clock.now
            let finder = ChartWeekFinder(timeZone: zone)
            let labels = WeekLabels(timeZone: zone)
            let years = finder.weeksWithCharts(now: now, in: list)
            if json {
                let rows = years.map { year -> [String: Any] in
                    ["yearsAgo": year.yearsAgo, "year": labels.year(of: year.week.fromDate), "week": ["from": year.week.from, "to": year.week.to]]
                }
                let data = try JSONSerialization.data(withJSONObject: ["user": user.value, "years": rows], options: [.prettyPrinted, .sortedKeys])
                Terminal.standardOutput.write(String(decoding: data, as: UTF8.self) + "\n")
                return
            }
            guard !years.isEmpty else {
                throw CommandFailure("\(user) has no chart for this week in any earlier year.", exitCode: .noData)
            }
            for year in years {
                let label = WeekLabels.yearsAgo(year.yearsAgo)
                Terminal.standardOutput.write("\(label.padding(toLength: 13, withPad: " ", startingAt: 0))  \(labels.label(for: year.week))\n")
            }
        }
    }
}

/// `vinylogue user USER`: validates a username and prints Last.fm's spelling.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Check a username and print its canonical spelling.")

    @OptionGroup var options: UserOptions

    func run() async throws {
        let user = try options.username()
        try await Composition.with { composition in
            let profile: User
            do {
                profile = try await composition.userSource(for: user, options.source).user(user)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            var lines = [profile.name.value]
            if let real = profile.realName { lines.append("Name: \(real)") }
            if profile.playCount > 0 { lines.append("Scrobbles: \(profile.playCount)") }
            if let registered = profile.registered {
                lines.append("Registered: \(WeekLabels(timeZone: .gmt).day(registered))")
            }
            Terminal.standardOutput.write(lines.joined(separator: "\n") + "\n")
        }
    }
}
