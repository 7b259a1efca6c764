import VinylogueApp
import ArgumentParser
import Foundation
import ListenBrainz
import MusicServers
import Stores
import VinylogueCore

/// Where a playlist goes: a file, or a music server.
enum PlaylistTarget: String, ExpressibleByArgument, CaseIterable {
    case xspf, jspf, m3u, subsonic, mpd, listenbrainz
}

/// `vinylogue playlist USER --years-ago N --to xspf|jspf|subsonic`: this
/// week, N years ago, as a playlist — a file (the week's albums in chart
/// order, each with the tracks played from it that week, from the archive),
/// or made on the person's Subsonic-API server (`ServerPlaylist`).
struct PlaylistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "This week, N years ago, as a playlist: a file (XSPF or JSPF), or made on your Subsonic-API music server.",
        discussion: "With --to subsonic, give the server's address with --server and the user with --server-user; the password is read from VINYLOGUE_SUBSONIC_PASSWORD (never from the command line, where other users could see it). With --to mpd, give mpd's host (and port, 6600 if not given) with --server; a password, if mpd wants one, is read from VINYLOGUE_MPD_PASSWORD. With --to m3u and --server (an mpd), the songs mpd has are written as an M3U8 file of its paths, which mpd loads from its playlist directory. With --to listenbrainz, the playlist is made (private) on the ListenBrainz account of the token in VINYLOGUE_LISTENBRAINZ_TOKEN, with the tracks that carry a MusicBrainz recording id.")

    @Argument(help: "A Last.fm username whose listening is archived.")
    var user: String

    @Option(name: .customLong("years-ago"), help: "How many years back (1 or more). Default: 1.")
    var yearsAgo: Int = 1

    @Option(help: "Where it goes: \(PlaylistTarget.allCases.map(\.rawValue).joined(separator: ", ")).")
    var to: PlaylistTarget = .xspf

    @Option(help: "For --to subsonic: the server's address, as your music apps have it (http://nas.local:4533); for --to mpd: host[:port].")
    var server: String?

    @Option(name: .customLong("server-user"), help: "For --to subsonic: your user on the server.")
    var serverUser: String?

    @Option(name: .shortAndLong, help: "Write the file here instead of to standard output.")
    var output: String?

    @Option(name: .customLong("time-zone"), help: "The time zone whose calendar finds this week (default: the system's).")
    var timeZone: String?

    @Option(name: .customLong("data-dir"), help: "The archive's data directory (default: $XDG_DATA_HOME/vinylogue).")
    var dataDir: String?

    func validate() throws {
        if yearsAgo < 1 { throw ValidationError("--years-ago must be 1 or more.") }
        switch to {
        case .subsonic:
            if server == nil || serverUser == nil { throw ValidationError("--to subsonic needs --server and --server-user.") }
        case .mpd, .m3u:
            if server == nil { throw ValidationError("--to \(to.rawValue) needs --server (mpd's host, and port if not 6600): \(to == .m3u ? "an M3U8 file names mpd's files" : "the playlist is saved there").") }
            if serverUser != nil { throw ValidationError("--server-user is for --to subsonic; mpd has a password only (VINYLOGUE_MPD_PASSWORD).") }
        case .xspf, .jspf, .listenbrainz:
            if server != nil || serverUser != nil { throw ValidationError("--server and --server-user go with --to subsonic, mpd or m3u.") }
        }
        if output != nil, to == .subsonic || to == .mpd || to == .listenbrainz {
            throw ValidationError("--output is for a file; --to \(to.rawValue) saves the playlist on the server.")
        }
    }

    /// The server's account, the password from the environment.
    func account(environment: [String: String]) throws -> SubsonicAccount {
        guard let password = environment["VINYLOGUE_SUBSONIC_PASSWORD"], !password.isEmpty else {
            throw CommandFailure("Set VINYLOGUE_SUBSONIC_PASSWORD to your password on the server, then run this again.", exitCode: .configuration)
        }
        guard let account = SubsonicAccount(address: server ?? "", username: serverUser ?? "", password: password) else {
            throw CommandFailure("“\(server ?? "")” is not a server address: give it as http://host:port (the address your music apps use).",
                                 exitCode: .usage)
        }
        return account
    }

    /// mpd's host and port (6600 unless given), its password from the environment.
    func mpdAccount(environment: [String: String]) throws -> MPDAccount {
        guard let account = MPDAccount(address: server ?? "", password: environment["VINYLOGUE_MPD_PASSWORD"]) else {
            throw CommandFailure("“\(server ?? "")” is not mpd’s address: give host:port, as in localhost:6600 ([::1]:6600 for IPv6).", exitCode: .usage)
        }
        return account
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
            guard let week = found else { throw CommandFailure(SourceError.notArchived(user: username.value)) }
            let labels = WeekLabels(timeZone: zone)
            guard !week.albums.isEmpty else {
                throw CommandFailure("\(username) played nothing in the week of \(labels.range(of: week.week)).", exitCode: .noData)
            }
            let playlist = week.playlist(labels: labels)
            let environment = ProcessInfo.processInfo.environment
            switch to {
            case .subsonic:
                let client = composition.subsonic(try account(environment: environment))
                try await Self.save(playlist, on: client, at: client.account.address.absoluteString)
                return
            case .mpd:
                let client = MPDClient(account: try mpdAccount(environment: environment))
                try await Self.save(playlist, on: client, at: "\(client.server) (mpd)")
                return
            case .m3u:
                let client = MPDClient(account: try mpdAccount(environment: environment))
                let matched: ServerPlaylist
                do {
                    matched = try await ServerPlaylist.match(playlist, in: client)
                } catch {
                    throw CommandFailure((error as? MusicServerError)?.description ?? "\(error)", exitCode: .upstream)
                }
                guard matched.saved else {
                    throw CommandFailure("None of the week’s albums is in mpd’s library at \(client.server): there is nothing to write.", exitCode: .noData)
                }
                try write(Data(matched.m3u8.utf8), tracks: matched.songs.count, albums: matched.found.count)
                if !matched.missing.isEmpty {
                    Terminal.standardError.write("Not in the library: " + matched.missing.map { "\($0.artist) — \($0.name)" }.joined(separator: "; ") + ".\n")
                }
                return
            case .listenbrainz:
                guard let token = environment["VINYLOGUE_LISTENBRAINZ_TOKEN"], !token.isEmpty else {
                    throw CommandFailure("Set VINYLOGUE_LISTENBRAINZ_TOKEN to your ListenBrainz user token (listenbrainz.org/settings), then run this again.",
                                         exitCode: .configuration)
                }
                let saved: ListenBrainzClient.SavedPlaylist?
                do {
                    saved = try await composition.listenBrainz.save(playlist, token: token)
                } catch let error as SourceError {
                    throw CommandFailure(error)
                }
                guard let saved else {
                    throw CommandFailure("None of the week’s \(playlist.tracks.count) tracks carries a MusicBrainz recording id, which ListenBrainz’s "
                        + "playlists need: nothing was saved. The XSPF or JSPF file (--to xspf, --to jspf) keeps them all.", exitCode: .noData)
                }
                var said = "\(saved.replaced ? "Replaced" : "Made") “\(playlist.title)” on ListenBrainz for \(saved.user) (private): "
                    + (saved.tracks == 1 ? "1 track" : "\(saved.tracks) tracks") + ". \(saved.address)\n"
                if saved.leftOut > 0 {
                    said += "\(saved.leftOut == 1 ? "1 track" : "\(saved.leftOut) tracks") without a MusicBrainz recording id left out.\n"
                }
                Terminal.standardOutput.write(said)
                return
            case .xspf, .jspf: break
            }
            guard let file = PlaylistFile(rawValue: to.rawValue) else { return }
            try write(file.data(playlist), tracks: playlist.tracks.count, albums: playlist.albums.count)
        }
    }

    /// The file to `--output`, or to standard output.
    func write(_ data: Data, tracks: Int, albums: Int) throws {
        guard let output else {
            Terminal.standardOutput.write(String(decoding: data, as: UTF8.self))
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CommandFailure("Could not write \(output): \(error.localizedDescription)", exitCode: .usage)
        }
        Terminal.standardError.write("Wrote \(tracks) tracks of \(albums) albums to \(output).\n")
    }

    /// Makes the playlist on the server and says what it did.
    static func save(_ playlist: AlbumPlaylist, on library: some MusicLibrary, at server: String) async throws {
        let made: ServerPlaylist
        do {
            made = try await ServerPlaylist.save(playlist, on: library)
        } catch {
            throw CommandFailure(error.description, exitCode: .upstream)
        }
        let missing = made.missing.isEmpty ? ""
            : "Not found there: " + made.missing.map { "\($0.artist) — \($0.name)" }.joined(separator: "; ") + "."
        guard made.saved else {
            throw CommandFailure("None of the week’s albums is in the library at \(server): nothing was saved. " + missing, exitCode: .noData)
        }
        var said = "\(made.replaced ? "Replaced" : "Made") “\(made.name)” on \(server): \(made.songs.count == 1 ? "1 song" : "\(made.songs.count) songs")"
            + " of \(made.found.count == 1 ? "1 album" : "\(made.found.count) albums").\n"
        if !missing.isEmpty { said += missing + "\n" }
        Terminal.standardOutput.write(said)
    }
}
