import VinylogueApp
import ArgumentParser
import Foundation
import ListenBrainz
import MusicServers
import Stores
import Sync
import VinylogueCore

/// Where a playlist goes: a file, or a music server.
enum PlaylistTarget: String, ExpressibleByArgument, CaseIterable {
    case xspf, jspf, m3u, subsonic, mpd, listenbrainz
}

/// `vinylogue playlist USER --years-ago N --to xspf|jspf|m3u|subsonic|mpd|listenbrainz`:
/// this week, N years ago, as a playlist — a file (the week's albums in
/// chart order, each with the tracks played from it that week, from the
/// archive), or made on the person's music server (`ServerPlaylist`) or
/// ListenBrainz account. `--year`, `--rediscover` or `--artist --album`
/// play a year's most played albums, rediscover's, or an album's life instead.
struct PlaylistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "This week, N years ago, as a playlist: a file (XSPF or JSPF), or made on your music server or ListenBrainz.",
        discussion: "Instead of a week: --year YYYY plays that year's most played albums, --rediscover the albums to rediscover, and --artist A --album N an album's tracks as played over its whole life. With --to subsonic, give the server's address with --server and the user with --server-user; the password is read from VINYLOGUE_SUBSONIC_PASSWORD (never from the command line, where other users could see it). With --to mpd, give mpd's host (and port, 6600 if not given) with --server; a password, if mpd wants one, is read from VINYLOGUE_MPD_PASSWORD. With --to m3u and --server (an mpd), the songs mpd has are written as an M3U8 file of its paths, which mpd loads from its playlist directory. With --to listenbrainz, the playlist is made (private) on the ListenBrainz account of the token in VINYLOGUE_LISTENBRAINZ_TOKEN, with the tracks that carry a MusicBrainz recording id.")

    @Argument(help: "A Last.fm username whose listening is archived.")
    var user: String

    @Option(name: .customLong("years-ago"), help: "This week, how many years back (1 or more). Default: 1.")
    var yearsAgo: Int?

    @Option(help: "Instead of a week: this year's most played albums (as the year's page ranks them).")
    var year: Int?

    @Flag(help: "Instead of a week: the albums to rediscover (played around this time of year, not in the last twelve months).")
    var rediscover = false

    @Option(help: "Instead of a week: this album's tracks as played over its whole life (with --artist).")
    var album: String?

    @Option(help: "The album's artist, with --album.")
    var artist: String?

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
        if let yearsAgo, !(1...999).contains(yearsAgo) { throw ValidationError("--years-ago must be from 1 to 999.") }
        if let year, !(1...9999).contains(year) { throw ValidationError("--year must be a year, as in 2019.") }
        if (album == nil) != (artist == nil) { throw ValidationError("--album and --artist go together: the album's name and its artist.") }
        if [yearsAgo != nil, year != nil, rediscover, album != nil].filter({ $0 }).count > 1 {
            throw ValidationError("Choose one of --years-ago, --year, --rediscover and --album.")
        }
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
            let playlist: AlbumPlaylist
            do {
                playlist = try await read(from: archive, of: username, now: composition.clock.now, timeZone: zone)
            } catch let error as SourceError {
                throw CommandFailure(error)
            }
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
                    throw CommandFailure("None of its albums is in mpd’s library at \(client.server): there is nothing to write.", exitCode: .noData)
                }
                try write(Data(matched.m3u8.utf8), tracks: matched.songs.count, albums: matched.found.count)
                if !matched.missing.isEmpty {
                    Terminal.standardError.write(Terminal.printable("Not in the library: " + matched.missing.map { "\($0.artist) — \($0.name)" }
                        .joined(separator: "; ") + ".") + "\n")
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
                    throw CommandFailure("None of its \(playlist.tracks.count) tracks carries a MusicBrainz recording id, which ListenBrainz’s "
                        + "playlists need: nothing was saved. The XSPF or JSPF file (--to xspf, --to jspf) keeps them all.", exitCode: .noData)
                }
                var said = "\(saved.replaced ? "Replaced" : "Made") “\(playlist.title)” on ListenBrainz for \(saved.user) (private): "
                    + (saved.tracks == 1 ? "1 track" : "\(saved.tracks) tracks") + ". \(saved.address)\n"
                if saved.leftOut > 0 {
                    said += "\(saved.leftOut == 1 ? "1 track" : "\(saved.leftOut) tracks") without a MusicBrainz recording id left out.\n"
                }
                Terminal.standardOutput.write(Terminal.printable(said))
                return
            case .xspf, .jspf: break
            }
            guard let file = PlaylistFile(rawValue: to.rawValue) else { return }
            try write(file.data(playlist), tracks: playlist.tracks.count, albums: playlist.albums.count)
        }
    }

    /// What to play, read from `archive`: this week N years ago, a year,
    /// rediscover's albums or an album's life.
    func read(from archive: any ScrobbleArchive, of user: Username, now: Date, timeZone zone: TimeZone) async throws -> AlbumPlaylist {
        let folding = try await archive.albumFolding(of: user)
        let notArchived = CommandFailure(SourceError.notArchived(user: user.value))
        if let year {
            guard let calendarYear = ListeningYear(year, timeZone: zone, now: now) else { throw ValidationError("--year must be a year, as in 2019.") }
            guard let playlist = try await archive.yearPlaylist(of: user, year: calendarYear) else { throw notArchived }
            guard !playlist.albums.isEmpty else { throw CommandFailure("\(user) played no album in \(year).", exitCode: .noData) }
            return playlist
        }
        if rediscover {
            let finds = try await Rediscoveries.load(user: user, now: now, timeZone: zone, charts: ArchiveChartSource(store: archive)).finds
            guard !finds.isEmpty else { throw CommandFailure("\(user) has nothing to rediscover this week.", exitCode: .noData) }
            return try await archive.rediscoverPlaylist(of: user, finds: finds, folding: folding)
        }
        if let album, let artist {
            guard let playlist = try await archive.albumPlaylist(of: user, artist: artist, album: album, folding: folding) else {
                throw CommandFailure("\(user) never played \(album) by \(artist) (or their history is not archived).", exitCode: .noData)
            }
            return playlist
        }
        guard let week = try await archive.weekPlaylist(of: user, yearsAgo: yearsAgo ?? 1, now: now, timeZone: zone, folding: folding) else {
            throw notArchived
        }
        let labels = WeekLabels(timeZone: zone)
        guard !week.albums.isEmpty else {
            throw CommandFailure("\(user) played nothing in the week of \(labels.range(of: week.week)).", exitCode: .noData)
        }
        return week.playlist(labels: labels)
    }

    /// The file to `--output`, or to standard output.
    func write(_ data: Data, tracks: Int, albums: Int) throws {
        guard let output else {
            Terminal.standardOutput.write(String(decoding: data, as: UTF8.self))
            return
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory), isDirectory.boolValue {
            let example = (output.hasSuffix("/") ? String(output.dropLast()) : output) + "/playlist." + (to == .m3u ? "m3u8" : to.rawValue)
            throw CommandFailure("\(output) is a directory: give -o the path of a file, as in \(example).", exitCode: .usage)
        }
        do {
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CommandFailure("Could not write \(output): check that its directory exists and can be written to.", exitCode: .usage)
        }
        Terminal.standardError.write(Terminal.printable("Wrote \(tracks == 1 ? "1 track" : "\(tracks) tracks") of "
            + "\(albums == 1 ? "1 album" : "\(albums) albums") to \(output).") + "\n")
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
            throw CommandFailure("None of its albums is in the library at \(server): nothing was saved. " + missing, exitCode: .noData)
        }
        var said = "\(made.replaced ? "Replaced" : "Made") “\(made.name)” on \(server): \(made.songs.count == 1 ? "1 song" : "\(made.songs.count) songs")"
            + " of \(made.found.count == 1 ? "1 album" : "\(made.found.count) albums").\n"
        if !missing.isEmpty { said += missing + "\n" }
        Terminal.standardOutput.write(Terminal.printable(said))
    }
}
