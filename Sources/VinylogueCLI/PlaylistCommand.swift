import VinylogueApp
import ArgumentParser
import Foundation
import Stores
import VinylogueCore

extension PlaylistFile: ExpressibleByArgument {}

/// `vinylogue playlist USER --years-ago N --to xspf|jspf`: this week, N
/// years ago, as a playlist file: the week's albums in chart order, each
/// with the tracks played from it that week, from the archive.
struct PlaylistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Write this week, N years ago, as a playlist file (XSPF or JSPF): the week's albums in chart order, each with the tracks played from it.")

    @Argument(help: "A Last.fm username whose listening is archived.")
    var user: String

    @Option(name: .customLong("years-ago"), help: "How many years back (1 or more). Default: 1.")
    var yearsAgo: Int = 1

    @Option(help: "The file's format: \(PlaylistFile.allCases.map(\.rawValue).joined(separator: " or ")).")
    var to: PlaylistFile = .xspf

    @Option(name: .shortAndLong, help: "Write the file here instead of to standard output.")
    var output: String?

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar finds this week (default: the system's).")
    var timeZone: String?

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    func validate() throws {
        if yearsAgo < 1 { throw ValidationError("--years-ago must be 1 or more.") }
    }

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await Composition.with { composition in
            let zone = try composition.timeZone(named: timeZone)
            let archive = try await composition.openArchiveForCommand(dataDir: dataDir)
            let found: WeekPlaylist?
            do {
                let folding = try await (archive as? any AlbumChoices)?.albumFolding(of: username) ?? .editions
                found = try await archive.weekPlaylist(of: username, yearsAgo: yearsAgo, now: composition.clock.now, timeZone: zone,
                                                       folding: folding)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            guard let playlist = found else { throw CommandFailure(SourceError.notArchived(user: username.value)) }
            let labels = WeekLabels(timeZone: zone)
            guard !playlist.albums.isEmpty else {
                throw CommandFailure("\(username) played nothing in the week of \(labels.range(of: playlist.week)).", exitCode: .noData)
            }
            let data = to.data(playlist, labels: labels)
            if let output {
                do {
                    try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw CommandFailure("Could not write \(output): \(error.localizedDescription)", exitCode: .usage)
                }
                Terminal.standardError.write("Wrote \(playlist.tracks.count) tracks of \(playlist.albums.count) albums to \(output).\n")
            } else {
                Terminal.standardOutput.write(String(decoding: data, as: UTF8.self))
            }
        }
    }
}
