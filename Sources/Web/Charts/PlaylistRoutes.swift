import Foundation
import HTTPServing
import Hummingbird
import ListenBrainz
import MusicServers
import Stores
import Sync
import VinylogueCore

/// What a playlist page plays: this week N years ago, a year's most
/// played albums, the albums to rediscover, or one album's whole life.
enum PlaylistSubject: Hashable, Sendable {
    case week(yearsAgo: Int)
    case year(Int)
    case rediscover
    case album(artist: String, name: String)

    /// The address's last segment before any ".xspf": "5", "year-2019",
    /// "rediscover", "album" (an album's names are in the query).
    var segment: String {
        switch self {
        case .week(let yearsAgo): String(yearsAgo)
        case .year(let year): "year-\(year)"
        case .rediscover: "rediscover"
        case .album: "album"
        }
    }

    var queryItems: [(name: String, value: String?)] {
        guard case .album(let artist, let name) = self else { return [] }
        return [("artist", artist), ("name", name)]
    }

    /// The longest name an album's address may carry.
    static let longestName = 8000

    /// What `file` ("5", "year-2019.xspf", "album") and, for an album, the
    /// query's `artist` and `name` ask for, and the file's format when it
    /// names one; nil when they name no playlist.
    static func parse(_ file: String, artist: String?, name: String?) -> (subject: PlaylistSubject, format: PlaylistDownload?)? {
        var stem = Substring(file), format: PlaylistDownload?
        if let dot = file.lastIndex(of: ".") {
            guard let named = PlaylistDownload(fileExtension: String(file[file.index(after: dot)...])) else { return nil }
            format = named
            stem = file[..<dot]
        }
        func number(_ digits: Substring, count: ClosedRange<Int>) -> Int? {
            guard count.contains(digits.count), digits.first != "0", digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(digits)
        }
        if let years = number(stem, count: 1...3) { return (.week(yearsAgo: years), format) }
        if stem.hasPrefix("year-"), let year = number(stem.dropFirst(5), count: 4...4) { return (.year(year), format) }
        if stem == "rediscover" { return (.rediscover, format) }
        if stem == "album", let artist, let name, !artist.isEmpty, !name.isEmpty, artist.count <= longestName, name.count <= longestName {
            return (.album(artist: artist, name: name), format)
        }
        return nil
    }
}

/// A playlist's download: a file anyone may have (`PlaylistFile`), or an
/// M3U8 of the paths of the person's own mpd, for them only.
enum PlaylistDownload: Hashable, Sendable {
    case file(PlaylistFile)
    case m3u8

    init?(fileExtension: String) {
        if fileExtension == "m3u8" {
            self = .m3u8
        } else if let file = PlaylistFile(rawValue: fileExtension) {
            self = .file(file)
        } else {
            return nil
        }
    }

    var fileExtension: String {
        switch self {
        case .file(let file): file.fileExtension
        case .m3u8: "m3u8"
        }
    }
}

/// `/u/{user}/playlist/{what}`: something to play again, as a page with
/// its files and, for the person themself, a button that makes it on their
/// own music server (Settings); `/u/{user}/playlist/{what}.xspf` and
/// `.jspf`: the files (`PlaylistFile`). What it plays (`PlaylistSubject`):
/// this week N years ago (the week's albums in chart order, each with the
/// tracks played from it that week), a year's most played albums, the
/// albums to rediscover, or an album's whole life. Counted from the
/// archive, as a year's page is; visibility applies as on every page. The
/// page is never kept: it may carry a form.
struct PlaylistRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let clock: WallClock
    let pages: PageRenderer
    /// Whose listening the viewer speaks for (their server makes their playlists).
    let own: OwnListening
    let musicServers: OwnMusicServers?
    var listenBrainz: OwnListenBrainz? = nil

    func register(people: RouterGroup<Context>) {
        people.get("playlist/:file") { request, context in try await self.file(request, context) }
        people.post("playlist/:file") { request, context in try await self.makeOnServer(request, context) }
    }

    struct PageView {
        struct Album {
            let artist: String
            let name: String
            let tracksLabel: String
        }

        struct Server {
            let action: String
            let name: String
        }

        struct ListenBrainzAccount {
            let action: String
            let user: String
        }

        var layout: LayoutFields
        let user: String
        let heading: String
        let label: String
        let backURL: String
        let albumsHeading: String
        let xspfURL: String
        let jspfURL: String
        /// For the person whose server is mpd: the M3U8 of its paths.
        var m3u8URL: String?
        let albums: [Album]
        var server: Server?
        var settingsURL: String?
        var listenBrainz: ListenBrainzAccount?
        var resultText: String?
        var missingText: String?
        var problemText: String?
    }

    /// A playlist found, with how its page names it.
    struct Found {
        let subject: PlaylistSubject
        let playlist: AlbumPlaylist
        let heading: String
        let label: String
        let backURL: String
        let albumsHeading: String
    }

    /// What `subject` plays for `user`, or the error to answer with.
    func found(_ subject: PlaylistSubject, of user: Username, settings: Settings, context: Context) async throws -> Found {
        let sources = self.sources.concealing(context.concealment)
        let chosen = await sources.chosenCharts(for: user)
        if context.concealment.conceals(user) { throw Self.failure(.unknownUser(user)) }
        guard chosen.origin == .archive, let archive = sources.archive else {
            // Someone Last.fm does not know is answered for as such.
            do throws(SourceError) { _ = try await sources.profiles(for: user).user(user) } catch { throw Self.failure(error) }
            throw HTTPError(.conflict, message: "A playlist is made from Vinylogue’s own copy of \(user.value)’s history, and it holds none yet.")
        }
        let folding = (try? await (archive as? any AlbumChoices)?.albumFolding(of: user)) ?? .editions
        let zone = settings.timeZone, now = clock.now
        switch subject {
        case .week(let yearsAgo):
            let ago = yearsAgo == 1 ? "a year" : "\(yearsAgo) years"
            let read = try await reading { () async throws(SourceError) in
                try await archive.weekPlaylist(of: user, yearsAgo: yearsAgo, now: now, timeZone: zone, folding: folding)
            }
            guard let week = read, !week.albums.isEmpty else {
                throw HTTPError(.notFound, message: "\(user.value) played nothing this week \(ago) ago: there is no playlist to make.")
            }
            let labels = WeekLabels(timeZone: zone)
            return Found(subject: subject, playlist: week.playlist(labels: labels),
                         heading: yearsAgo == 1 ? "1 year ago, to play again" : "\(yearsAgo) years ago, to play again",
                         label: labels.label(for: week.week), backURL: Paths.chart(user, yearsAgo: yearsAgo), albumsHeading: "The week’s albums")
        case .year(let year):
            let read = try await reading { () async throws(SourceError) -> AlbumPlaylist? in
                guard let calendarYear = ListeningYear(year, timeZone: zone, now: now) else { return nil }
                return try await archive.yearPlaylist(of: user, year: calendarYear)
            }
            guard let playlist = read, !playlist.albums.isEmpty else {
                throw HTTPError(.notFound, message: "\(user.value) played no album in \(year): there is no playlist to make.")
            }
            return Found(subject: subject, playlist: playlist, heading: "\(year), to play again",
                         label: playlist.albums.count == 1 ? "The year’s most played album" : "The year’s \(playlist.albums.count) most played albums",
                         backURL: Paths.year(user, year), albumsHeading: "The year’s albums")
        case .rediscover:
            let finds = try await reading { () async throws(SourceError) in
                try await Rediscoveries.load(user: user, now: now, timeZone: zone, charts: chosen.source).finds
            }
            guard !finds.isEmpty else {
                throw HTTPError(.notFound, message: "\(user.value) has nothing to rediscover this week: there is no playlist to make.")
            }
            let playlist = try await reading { () async throws(SourceError) in
                try await archive.rediscoverPlaylist(of: user, finds: finds, folding: folding)
            }
            return Found(subject: subject, playlist: playlist, heading: "To rediscover, to play again",
                         label: "Albums played around this time of year, and not in the last twelve months",
                         backURL: Paths.rediscover(user), albumsHeading: "The albums")
        case .album(let artist, let name):
            let read = try await reading { () async throws(SourceError) in
                try await archive.albumPlaylist(of: user, artist: artist, album: name, folding: folding)
            }
            guard let playlist = read, let album = playlist.albums.first else {
                throw HTTPError(.notFound, message: "\(user.value) never played \(name) by \(artist): there is no playlist to make.")
            }
            return Found(subject: subject, playlist: playlist, heading: "\(album.name), to play again", label: "by \(album.artist)",
                         backURL: Paths.album(user, artist: album.artist, name: album.name, day: nil), albumsHeading: "The album")
        }
    }

    /// What `work` reads, its failure the answer's.
    func reading<Value>(_ work: () async throws(SourceError) -> Value) async throws -> Value {
        do throws(SourceError) { return try await work() } catch { throw Self.failure(error) }
    }

    /// The page for `found`, with the viewer's server when it is theirs.
    func page(_ found: Found, request: Request, context: Context) async -> (PageView, (value: String, isNew: Bool)?) {
        let playlist = found.playlist, user = playlist.user
        var view = PageView(
            layout: LayoutFields(title: "\(user.value) · \(playlist.title)", csrf: ""), user: user.value, heading: found.heading,
            label: found.label, backURL: found.backURL, albumsHeading: found.albumsHeading,
            xspfURL: Paths.playlist(user, found.subject, .xspf), jspfURL: Paths.playlist(user, found.subject, .jspf),
            albums: playlist.albums.map {
                PageView.Album(artist: $0.artist, name: $0.name, tracksLabel: $0.tracks.count == 1 ? "1 track played" : "\($0.tracks.count) tracks played")
            })
        guard await own.person(of: context) == user, let owner = await context.viewer.owner else { return (view, nil) }
        let action = Paths.playlistPage(user, found.subject)
        if let musicServers {
            if let setting = try? await musicServers.store.musicServer(of: owner) {
                view.server = PageView.Server(action: action, name: OwnMusicServers.name(setting))
                if setting.kind == .mpd { view.m3u8URL = Paths.playlistM3U8(user, found.subject) }
            } else {
                view.settingsURL = Paths.settings + "#music"
            }
        }
        if let account = await listenBrainz?.account(of: owner) {
            view.listenBrainz = PageView.ListenBrainzAccount(action: action, user: account.user)
        }
        guard view.server != nil || view.listenBrainz != nil else { return (view, nil) }
        let csrf = CSRFProtection.token(for: request)
        view.layout.csrf = csrf.value
        return (view, csrf)
    }

    /// The subject and format the address asks for.
    static func asked(_ request: Request, _ context: Context) -> (subject: PlaylistSubject, format: PlaylistDownload?)? {
        let query = request.uri.queryParameters
        return PlaylistSubject.parse(context.parameters.get("file") ?? "", artist: query.get("artist"), name: query.get("name"))
    }

    /// `POST /u/{user}/playlist/{what}`: makes the playlist on the
    /// viewer's own server, and says what it did.
    func makeOnServer(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        guard let (subject, format) = Self.asked(request, context) else { throw Self.namesNoPlaylist }
        guard format == nil else { throw HTTPError(.methodNotAllowed) }
        let form = try await FormFields.read(request, limit: 4096)
        try CSRFProtection.verify(request, form: form)
        guard await own.person(of: context) == user, let owner = await context.viewer.owner else {
            throw HTTPError(.forbidden, message: "Only \(user.value) can make \(user.value)’s playlists, on their own music server.")
        }
        let settings = await viewers.settings(for: context)
        let found = try await found(subject, of: user, settings: settings, context: context)
        var (view, csrf) = await page(found, request: request, context: context)
        var status = HTTPResponse.Status.ok
        switch form["to"] {
        case nil, "server": break
        case "listenbrainz": break
        default: throw HTTPError(.badRequest, message: "Choose where to make it: on your music server, or on ListenBrainz.")
        }
        if form["to"] == "listenbrainz" {
            status = await makeOnListenBrainz(found.playlist, of: owner, into: &view)
        } else if let musicServers {
            status = await makeOnServer(found.playlist, of: owner, with: musicServers, into: &view)
        } else {
            throw HTTPError(.notFound, message: "This Vinylogue makes no playlists on music servers.")
        }
        var response = pages.response("playlist", view, status: status)
        if let csrf { response.attach(csrf: csrf) }
        return response
    }

    /// Makes `playlist` on `owner`'s ListenBrainz account (private, its
    /// tracks with recording ids) and says what it did on `view`.
    func makeOnListenBrainz(_ playlist: AlbumPlaylist, of owner: ListOwner, into view: inout PageView) async -> HTTPResponse.Status {
        guard let listenBrainz, let account = await listenBrainz.account(of: owner) else {
            view.problemText = "Give your ListenBrainz token in Settings (forwarding your listens there), and this page makes it on your account."
            return .conflict
        }
        do throws(SourceError) {
            guard let saved = try await listenBrainz.save(playlist, account.token) else {
                view.problemText = (playlist.tracks.count == 1 ? "Its track carries no" : "None of its \(playlist.tracks.count) tracks carries a")
                    + " MusicBrainz recording id, which ListenBrainz’s playlists need: nothing was saved. The XSPF or JSPF file keeps them all."
                return .unprocessableContent
            }
            view.resultText = "\(saved.replaced ? "Replaced" : "Made") “\(playlist.title)” on ListenBrainz for \(saved.user) (private): "
                + (saved.tracks == 1 ? "1 track." : "\(saved.tracks) tracks.")
                + (saved.leftOut == 0 ? "" : " \(saved.leftOut == 1 ? "1 track" : "\(saved.leftOut) tracks") without a MusicBrainz recording id left out.")
            return .ok
        } catch .listenBrainz(.invalidToken) {
            view.problemText = "ListenBrainz no longer accepts your token: give it again in Settings. Nothing was saved."
            return .badGateway
        } catch {
            view.problemText = error.forVisitors + " Nothing was saved."
            return HTTPResponse.Status(for: error)
        }
    }

    /// Makes `playlist` on `owner`'s music server and says what it did on `view`.
    func makeOnServer(_ playlist: AlbumPlaylist, of owner: ListOwner, with musicServers: OwnMusicServers,
                      into view: inout PageView) async -> HTTPResponse.Status {
        let made = await musicServers.withLibrary(of: owner) { library -> (Result<ServerPlaylist, MusicServerError>, String) in
            do throws(MusicServerError) {
                return (.success(try await ServerPlaylist.save(playlist, on: library)), library.server)
            } catch {
                return (.failure(error), library.server)
            }
        }
        switch made {
        case nil:
            view.problemText = "You have no music server yet: add it in Settings."
            return .conflict
        case .failure(let problem)?:
            view.problemText = problem.sentence + " Nothing was saved."
            return .badGateway
        case .success((.failure(let error), _))?:
            view.problemText = error.description + " Nothing was saved."
            return .badGateway
        case .success((.success(let made), let server))?:
            let name = view.server?.name ?? server
            if made.saved {
                view.resultText = "\(made.replaced ? "Replaced" : "Made") “\(made.name)” on \(name): "
                    + (made.songs.count == 1 ? "1 song" : "\(made.songs.count) songs") + " of "
                    + (made.found.count == 1 ? "1 album." : "\(made.found.count) albums.")
            } else {
                view.problemText = (made.missing.count == 1 ? "The album is not " : "None of the \(made.missing.count) albums is ")
                    + "in your library on \(name): nothing was saved."
            }
            if made.saved, !made.missing.isEmpty {
                view.missingText = "Not in your library: " + made.missing.map { "\($0.name) (\($0.artist))" }.joined(separator: "; ") + "."
            }
            return .ok
        }
    }

    func file(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        guard let (subject, format) = Self.asked(request, context) else { throw Self.namesNoPlaylist }
        let settings = await viewers.settings(for: context)
        let found = try await found(subject, of: user, settings: settings, context: context)
        guard let format else {
            let (view, csrf) = await page(found, request: request, context: context)
            var response = pages.response("playlist", view)
            if let csrf { response.attach(csrf: csrf) }
            return response
        }
        switch format {
        case .file(let file):
            return Self.download(file.data(found.playlist), mediaType: file.mediaType, name: file.fileName(found.playlist))
        case .m3u8:
            return try await m3u8(found.playlist, request: request, context: context)
        }
    }

    static func download(_ data: Data, mediaType: String, name: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = mediaType + "; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(name)\""
        headers[.cacheControl] = "private, no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    /// `playlist` as an M3U8 of the paths of the person's own mpd (matched
    /// in its library as "Make it on …" matches): what mpd loads from its
    /// playlist directory. Only for the person, and only with mpd: a
    /// Subsonic server's songs have no paths a file could name.
    func m3u8(_ playlist: AlbumPlaylist, request: Request, context: Context) async throws -> Response {
        let user = playlist.user
        guard let musicServers, await own.person(of: context) == user, let owner = await context.viewer.owner else {
            throw HTTPError(.forbidden, message: "An M3U8 names the files on \(user.value)’s own mpd: only \(user.value) can have it. "
                + "The XSPF and JSPF files are for everyone.")
        }
        guard let setting = try await musicServers.store.musicServer(of: owner), setting.kind == .mpd else {
            throw HTTPError(.conflict, message: "An M3U8 names the files on your mpd, and you have no mpd in Settings: add it there, "
                + "or take the XSPF file, which players find by its names.")
        }
        let matched = await musicServers.withLibrary(of: owner) { library -> Result<ServerPlaylist, MusicServerError> in
            do throws(MusicServerError) { return .success(try await ServerPlaylist.match(playlist, in: library, within: ServerPlaylist.matchBudget)) }
            catch { return .failure(error) }
        }
        switch matched {
        case nil: throw HTTPError(.conflict, message: "You have no music server yet: add it in Settings.")
        case .failure(let problem)?: throw HTTPError(.badGateway, message: problem.sentence)
        case .success(.failure(let error))?: throw HTTPError(.badGateway, message: error.description)
        case .success(.success(let made))?:
            guard made.saved else {
                throw HTTPError(.notFound, message: "None of its albums is in your mpd’s library: there is nothing to put in the file.")
            }
            return Self.download(Data(made.m3u8.utf8), mediaType: "audio/x-mpegurl",
                                 name: "vinylogue-\(AlbumPlaylist.fileSafe(user.value))-\(playlist.fileStem).m3u8")
        }
    }

    /// What an address that names no playlist is told.
    static let namesNoPlaylist = HTTPError(.badRequest, message: "This address names no playlist: it ends in the years back (/playlist/5), "
        + "year-YYYY, rediscover, or album with the album’s artist and name (/playlist/album?artist=…&name=…), and .xspf or .jspf for a file.")

    static func failure(_ error: SourceError) -> HTTPError {
        HTTPError(HTTPResponse.Status(for: error), message: error.forVisitors)
    }
}

/// A person's ListenBrainz account, for playlists: the token they forward
/// their listens with (Settings), and what saves a playlist there.
struct OwnListenBrainz: Sendable {
    let outbox: any ForwardingOutbox
    let save: @Sendable (AlbumPlaylist, _ token: String) async throws(SourceError) -> ListenBrainzClient.SavedPlaylist?

    /// `owner`'s token and ListenBrainz name; nil when they gave none.
    func account(of owner: ListOwner) async -> (token: String, user: String)? {
        guard let choice = try? await outbox.choice(of: owner), let token = choice.listenBrainzToken, !token.isEmpty else { return nil }
        return (token, choice.listenBrainzUser ?? "")
    }
}
