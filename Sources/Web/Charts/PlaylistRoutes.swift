import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/playlist/{N}.xspf` and `.jspf`: this week, N years ago, as a
/// playlist file to download (`WeekPlaylist`, `PlaylistFile`): the week's
/// albums in chart order, each with the tracks played from it that week.
/// Counted from the archive, as a year's page is; visibility applies as
/// on every page.
struct PlaylistRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let viewers: Viewers
    let clock: WallClock

    func register(people: RouterGroup<Context>) {
        people.get("playlist/:file") { request, context in try await self.file(request, context) }
    }

    /// "5.xspf": the years back and the format.
    static func parse(_ file: String) -> (yearsAgo: Int, format: PlaylistFile)? {
        let parts = file.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 3, parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let years = Int(parts[0]), years >= 1, let format = PlaylistFile(rawValue: String(parts[1])) else { return nil }
        return (years, format)
    }

    func file(_ request: Request, _ context: Context) async throws -> Response {
        let user = try context.requiredPerson().name
        guard let (yearsAgo, format) = Self.parse(context.parameters.get("file") ?? "") else {
            throw HTTPError(.badRequest, message: "This address names no playlist: it ends in the years back and .xspf or .jspf, as in /playlist/5.xspf.")
        }
        let settings = await viewers.settings(for: context)
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
        let labels = WeekLabels(timeZone: settings.timeZone)
        guard let playlist = found, !playlist.albums.isEmpty else {
            throw HTTPError(.notFound, message: "\(user.value) played nothing this week \(yearsAgo == 1 ? "a year" : "\(yearsAgo) years") ago: there is no playlist to make.")
        }
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
