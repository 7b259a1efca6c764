import VinylogueApp
import ArgumentParser
import Foundation
import Stores
import VinylogueCore

/// `vinylogue albums USER`: every album in an archived user's listening,
/// most played first; with `--spellings`, the albums whose listens carry
/// more than one spelling (editions, reissues, case) and each spelling's
/// plays: what "editions are one album" joined.
struct AlbumsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "albums",
        abstract: "List an archived user's albums, most played first; --spellings shows which spellings were counted as one album.")

    @Argument(help: "A Last.fm username whose listening is archived.")
    var user: String

    @Flag(help: "Only albums played under more than one spelling, with each spelling and its plays.")
    var spellings = false

    @Option(help: "At most this many albums (0: all).")
    var limit = 50

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        guard let username = Username(validating: user) else {
            throw CommandFailure("“\(user)” is not a valid Last.fm username.", exitCode: .usage)
        }
        try await Composition.with { composition in
            let archive = try await composition.openArchiveForCommand(dataDir: dataDir)
            let found: [SpelledAlbum]?
            let folding: AlbumFolding
            do {
                found = try await archive.albumSpellings(of: username)
                folding = try await archive.albumFolding(of: username)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
            guard let found else { throw CommandFailure(SourceError.notArchived(user: username.value)) }
            var albums = spellings ? found.filter { $0.spellings.count > 1 } : found
            if limit > 0 { albums = Array(albums.prefix(limit)) }
            if json {
                Terminal.standardOutput.write(try AlbumLifeCommand.json(albums) + "\n")
                return
            }
            guard !albums.isEmpty else {
                let said = spellings
                    ? "Every album \(username) played has one spelling: nothing was counted together."
                    : "\(username) has listens, but none of them names an album."
                Terminal.standardOutput.write(said + "\n")
                return
            }
            var out = spellings
                ? "Albums \(username) played under more than one spelling, each counted as one album:\n\n"
                : "\(username)’s albums, most played first:\n\n"
            for album in albums {
                out += "  \(WeekLabels.plays(album.plays).leftPadded(11))  \(album.artist) — \(album.name)\n"
                guard spellings else { continue }
                for spelling in album.spellings {
                    let tied = folding.tiedByRelease(artist: spelling.artist, album: spelling.album, toArtist: album.artist, toAlbum: album.name)
                    out += "  \(String(repeating: " ", count: 11))    \(WeekLabels.plays(spelling.plays).leftPadded(10))  \(spelling.artist) — \(spelling.album)"
                        + (tied ? "  (the same MusicBrainz release)" : "") + "\n"
                }
            }
            if !spellings, found.contains(where: { $0.spellings.count > 1 }) {
                out += "\nSome albums were played under several spellings; `vinylogue albums \(username) --spellings` lists them.\n"
            }
            Terminal.standardOutput.write(out)
        }
    }
}
