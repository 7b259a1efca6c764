import Foundation
import HTTPServing
import Hummingbird
import MusicServers
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/playlist/{N}.xspf` and `.jspf`: this week, N years ago, as a
/// playlist file to download (`WeekPlaylist`, `PlaylistFile`): the week's
/// albums in chart order, each with the tracks played from it that week.
/// `/u/{user}/playlist/{N}`: a page with both, and for the person
/// themself, a button that makes the playlist on their own music server
/// (Settings). Counted from the archive, as a year's page is; visibility
/// applies as on every page. The page is never kept: it may carry a form.
struct PlaylistRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let clock: WallClock
    let pages: PageRenderer
    /// Whose listening the viewer speaks for (their server makes their playlists).
    let own: OwnListening
    let musicServers: OwnMusicServers?

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

        var layout: LayoutFields
        let user: String
        let heading: String
        let weekLabel: String
        let chartURL: String
        let xspfURL: String
        let jspfURL: String
        let albums: [Album]
        var server: Server?
        var settingsURL: String?
        var resultText: String?
        var missingText: String?
        var problemText: String?
    }

    /// "5" of "5", "5.xspf" of neither.
    static func yearsAgo(_ file: String) -> Int? {
        guard (1...3).contains(file.count), file.first != "0", file.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let years = Int(file) else { return nil }
        return years
    }

    /// The week's playlist for `user`, `yearsAgo` years back, or the error to answer with.
    func playlist(_ user: Username, yearsAgo: Int, settings: Settings, context: Context) async throws -> WeekPlaylist {
        let sources = self.sources.concealing(context.concealment)
        let chosen = await sources.chosenCharts(for: user)
        if context.concealment.conceals(user) { throw Self.failure(.unknownUser(user)) }
        guard chosen.origin == .archive, let archive = sources.archive else {
            // Someone Last.fm does not know is answered for as such.
            do throws(SourceError) { _ = try await sources.profiles(for: user).user(user) } catch { throw Self.failure(error) }
            throw HTTPError(.conflict, message: "A playlist is made from Vinylogue’s own copy of \(user.value)’s history, and it holds none yet.")
        }
        let folding = (try? await (archive as? any AlbumChoices)?.albumFolding(of: user)) ?? .editions
        let found: WeekPlaylist?
        do {
            found = try await archive.weekPlaylist(of: user, yearsAgo: yearsAgo, now: clock.now, timeZone: settings.timeZone, folding: folding)
        } catch {
            throw Self.failure(error)
        }
        guard let playlist = found, !playlist.albums.isEmpty else {
            throw HTTPError(.notFound, message: "\(user.value) played nothing this week \(yearsAgo == 1 ? "a year" : "\(yearsAgo) years") ago: there is no playlist to make.")
        }
        return playlist
    }

    /// The page for `playlist`, with the viewer's server when it is theirs.
    func page(_ playlist: WeekPlaylist, settings: Settings, request: Request, context: Context) async -> (PageView, (value: String, isNew: Bool)?) {
        let user = playlist.user, labels = WeekLabels(timeZone: settings.timeZone)
        var view = PageView(
            layout: LayoutFields(title: "\(user.value) · \(playlist.title)", csrf: ""), user: user.value,
            heading: playlist.yearsAgo == 1 ? "1 year ago, to play again" : "\(playlist.yearsAgo) years ago, to play again",
            weekLabel: labels.label(for: playlist.week), chartURL: Paths.chart(user, yearsAgo: playlist.yearsAgo),
            xspfURL: Paths.playlist(user, yearsAgo: playlist.yearsAgo, .xspf), jspfURL: Paths.playlist(user, yearsAgo: playlist.yearsAgo, .jspf),
            albums: playlist.albums.map {
                PageView.Album(artist: $0.artist, name: $0.name, tracksLabel: $0.tracks.count == 1 ? "1 track played" : "\($0.tracks.count) tracks played")
            })
        guard let musicServers, await own.person(of: context) == user, let owner = await context.viewer.owner else { return (view, nil) }
        guard let setting = try? await musicServers.store.musicServer(of: owner) else {
            view.settingsURL = Paths.settings + "#music"
            return (view, nil)
        }
        let csrf = CSRFProtection.token(for: request)
        view.layout.csrf = csrf.value
        view.server = PageView.Server(action: Paths.playlistPage(user, yearsAgo: playlist.yearsAgo), name: OwnMusicServers.name(setting))
        return (view, csrf)
    }

    /// `POST /u/{user}/playlist/{N}`: makes the week's playlist on the
    /// viewer's own server, and says what it did.
    func makeOnServer(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        guard let yearsAgo = Self.yearsAgo(context.parameters.get("file") ?? "") else { throw HTTPError(.methodNotAllowed) }
        let form = try await FormFields.read(request, limit: 4096)
        try CSRFProtection.verify(request, form: form)
        guard let musicServers, await own.person(of: context) == user, let owner = await context.viewer.owner else {
            throw HTTPError(.forbidden, message: "Only \(user.value) can make \(user.value)’s playlists, on their own music server.")
        }
        let settings = await viewers.settings(for: context)
        let playlist = try await playlist(user, yearsAgo: yearsAgo, settings: settings, context: context)
        var (view, csrf) = await page(playlist, settings: settings, request: request, context: context)
        var status = HTTPResponse.Status.ok
        switch await musicServers.library(of: owner) {
        case nil:
            view.problemText = "You have no music server yet: add it in Settings."
            status = .conflict
        case .failure(let problem)?:
            view.problemText = problem.sentence + " Nothing was saved."
            status = .badGateway
        case .success(let library)?:
            do {
                let made = try await ServerPlaylist.save(playlist, on: library)
                if made.saved {
                    view.resultText = "\(made.replaced ? "Replaced" : "Made") “\(made.name)” on \(view.server?.name ?? library.server): "
                        + (made.songs.count == 1 ? "1 song" : "\(made.songs.count) songs") + " of "
                        + (made.found.count == 1 ? "1 album." : "\(made.found.count) albums.")
                } else {
                    view.problemText = "None of the week’s \(made.missing.count == 1 ? "album" : "\(made.missing.count) albums") is in your library "
                        + "on \(view.server?.name ?? library.server): nothing was saved."
                }
                if made.saved, !made.missing.isEmpty {
                    view.missingText = "Not in your library: " + made.missing.map { "\($0.name) (\($0.artist))" }.joined(separator: "; ") + "."
                }
            } catch {
                view.problemText = error.description + " Nothing was saved."
                status = .badGateway
            }
        }
        var response = pages.response("playlist", view, status: status)
        if let csrf { response.attach(csrf: csrf) }
        return response
    }

    /// "5.xspf": the years back and the format.
    static func parse(_ file: String) -> (yearsAgo: Int, format: PlaylistFile)? {
        let parts = file.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 3, parts[0].first != "0", parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let years = Int(parts[0]), years >= 1, let format = PlaylistFile(rawValue: String(parts[1])) else { return nil }
        return (years, format)
    }

    func file(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        if let yearsAgo = Self.yearsAgo(context.parameters.get("file") ?? "") {
            let settings = await viewers.settings(for: context)
            let playlist = try await playlist(user, yearsAgo: yearsAgo, settings: settings, context: context)
            let (view, csrf) = await page(playlist, settings: settings, request: request, context: context)
            var response = pages.response("playlist", view)
            if let csrf { response.attach(csrf: csrf) }
            return response
        }
        guard let (yearsAgo, format) = Self.parse(context.parameters.get("file") ?? "") else {
            throw HTTPError(.badRequest, message: "This address names no playlist: it ends in the years back and .xspf or .jspf, as in /playlist/5.xspf.")
        }
        let settings = await viewers.settings(for: context)
        let playlist = try await playlist(user, yearsAgo: yearsAgo, settings: settings, context: context)
        let labels = WeekLabels(timeZone: settings.timeZone)
        var headers = HTTPFields()
        headers[.contentType] = format.mediaType + "; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(format.fileName(playlist, labels: labels))\""
        headers[.cacheControl] = "private, no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: format.data(playlist, labels: labels))))
    }

    static func failure(_ error: SourceError) -> HTTPError {
        HTTPError(HTTPResponse.Status(for: error), message: error.forVisitors)
    }
}
