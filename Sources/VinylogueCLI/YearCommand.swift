import VinylogueApp
import ArgumentParser
import Foundation
import Stores
import VinylogueCore

/// `vinylogue year USER YYYY`: an archived person's year in review — top
/// albums, artists and tracks, the albums they found, each month's album,
/// the week played most, when they listened.
struct YearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "year",
        abstract: "Show an archived user's year in review: top albums, artists and tracks, discoveries, each month's album, when they listened.")

    @Argument(help: "A Last.fm username whose listening is archived.")
    var user: String

    @Argument(help: "The year, four digits, e.g. 2019.")
    var year: String

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar year is counted (default: the system's).")
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
            guard let number = ListeningYear.number(year), let calendarYear = ListeningYear(number, timeZone: zone, now: composition.clock.now) else {
                throw CommandFailure("“\(year)” is not a year. Give four digits, as in 2019.", exitCode: .usage)
            }
            let archive = try await composition.openArchiveForCommand(dataDir: dataDir)
            let found: YearInReview?
            do {
                found = try await archive.yearInReview(of: username, in: calendarYear)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            guard let review = found else { throw CommandFailure(SourceError.notArchived(user: username.value)) }
            if json {
                Terminal.standardOutput.write(String(decoding: YearJSONView(review).data(), as: UTF8.self) + "\n")
                return
            }
            guard review.totals.plays > 0 else {
                var said = "\(username) played nothing in \(calendarYear.year)"
                if let years = review.years {
                    said += years.count == 1 ? "; their history is all in \(years.lowerBound)"
                        : "; their history runs from \(years.lowerBound) to \(years.upperBound)"
                }
                throw CommandFailure(said + ".", exitCode: .noData)
            }
            Terminal.standardOutput.write(Self.text(review))
        }
    }

    /// The review as the terminal shows it.
    static func text(_ review: YearInReview) -> String {
        let labels = WeekLabels(timeZone: review.timeZone)
        let t = review.totals
        var out = "\(review.user)’s \(review.year)\n\n"
        out += "\(t.plays == 1 ? "1 play" : "\(grouped(t.plays)) plays") · \(grouped(t.albums)) albums · \(grouped(t.artists)) artists · \(grouped(t.tracks)) tracks"
            + " · \(t.days) days with music\n"
        if let change = review.changeSentence { out += change + "\n" }
        func list(_ title: String, _ entries: [YearInReview.Entry], artistOnly: Bool = false) {
            guard !entries.isEmpty else { return }
            out += "\n\(title)\n"
            for (n, entry) in entries.enumerated() {
                let name = artistOnly ? entry.artist : "\(entry.artist) — \(entry.name)"
                out += "  \(String(n + 1).leftPadded(2)). \(name)  (\(WeekLabels.plays(entry.plays)))\n"
            }
        }
        list("Top albums", review.topAlbums)
        list("Top artists", review.topArtists, artistOnly: true)
        list("Top tracks", review.topTracks)
        if !review.discoveries.isEmpty {
            out += "\nFound this year\n"
            for found in review.discoveries {
                let lasted = found.weeks == 1 ? "one week" : "\(found.weeks) weeks, until \(labels.label(for: found.lastWeek))"
                out += "  \(found.album.artist) — \(found.album.name)  (\(WeekLabels.plays(found.album.plays)); "
                    + "first in \(labels.label(for: found.firstWeek)); charted in \(lasted))\n"
            }
        }
        out += "\nEach month’s album\n"
        for month in review.months {
            let name = YearInReview.monthNames[month.month].padding(toLength: 10, withPad: " ", startingAt: 0)
            if month.isAhead {
                out += "  \(name) still to come\n"
            } else if let album = month.album {
                out += "  \(name) \(album.artist) — \(album.name)  (\(WeekLabels.plays(album.plays)) of \(grouped(month.plays)))\n"
            } else {
                out += "  \(name) —\n"
            }
        }
        if let top = review.topWeek {
            out += "\nThe week played most: \(labels.label(for: top.week)), \(grouped(top.plays)) plays\n"
        }
        if let day = review.weekdays.indices.max(by: { review.weekdays[$0] < review.weekdays[$1] }), review.weekdays[day] > 0,
           let hour = review.hours.indices.max(by: { review.hours[$0] < review.hours[$1] }) {
            out += "Most played on \(YearInReview.weekdayNames[day])s, and at \(String(format: "%02d:00", hour))–\(String(format: "%02d:00", (hour + 1) % 24))"
                + " (\(review.timeZone.identifier))\n"
        }
        return out
    }
}
