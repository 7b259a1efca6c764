import Sync
import Stores
import Artwork
import Foundation
import Hummingbird
import VinylogueCore

/// Album art, served from our own origin:
///
/// - `/u/{user}/cover/{artist}/{album}` finds the album's image through its
///   details (cached 30 days) and redirects to its `/art/` address; the
///   demo's albums get generated covers; no image means the placeholder.
///   For an archived user the answer is the remembered one
///   (`AlbumCovers`: `vinylogue art fetch`, or an earlier visit), so the
///   cover shows with Last.fm unreachable; an album not yet remembered is
///   resolved now, within the client's rate limit, and remembered.
/// - `/art/{size}/{hash}.{ext}` serves the image from the disk cache,
///   fetching it on a miss only from Last.fm's image host (the address is
///   rebuilt from its parts, so no request can name another URL).
/// - `/theme/{bg}/{text}/{secondary}.css` is the album page's palette.
struct CoverRoutes: Sendable {
    typealias Context = WebRequestContext
    let sources: ListeningSources
    let demoCovers: DemoCoverCatalogue
    let artwork: ArtworkStore
    let albumCovers: AlbumCovers

    /// `people` is the group of `/u/{user}`.
    func register(on router: Router<Context>, people: RouterGroup<Context>) {
        people.get("cover/:artist/:album") { request, context in try await self.cover(request, context) }
        router.get("/art/:size/:file") { _, context in try await self.art(context) }
        router.get("/theme/:bg/:text/:secondary") { _, context in Self.theme(context) }
    }

    /// The `/art/` address of an album's cover, or `nil` when it has none
    /// (as for an unknown name, for a person `concealment` conceals).
    func address(user: Username, artist: String, name: String, mbid: String?, concealing concealment: Concealment) async -> ArtworkAddress? {
        let sources = self.sources.concealing(concealment)
        if sources.isDemo(user) {
            return demoCovers.register(artist: artist, album: name)
        }
        if await sources.source(for: user) == .archive {
            // A failure of the moment is not remembered: the placeholder now, the cover later.
            return try? await albumCovers.answer(artist: artist, name: name, mbid: mbid).address
        }
        guard let detail = try? await sources.albums(for: user).album(artist: artist, name: name, mbid: mbid, user: nil) else { return nil }
        return ArtworkAddress(coverOf: detail)
    }

    /// The `/art/` addresses of the given albums' covers, looked up
    /// concurrently, in order; nil for an album without one.
    func addresses(user: Username, albums: [(artist: String, name: String, mbid: String?)],
                   concealing concealment: Concealment) async -> [ArtworkAddress?] {
        await withTaskGroup(of: (Int, ArtworkAddress?).self) { group in
            for (index, album) in albums.enumerated() {
                group.addTask {
                    (index, await self.address(user: user, artist: album.artist, name: album.name, mbid: album.mbid, concealing: concealment))
                }
            }
            var found = [ArtworkAddress?](repeating: nil, count: albums.count)
            for await (index, address) in group { found[index] = address }
            return found
        }
    }

    func cover(_ request: Request, _ context: Context) async throws -> Response {
        guard let person = context.person,
              let artist = context.parameters.get("artist")?.removingPercentEncoding,
              let name = context.parameters.get("album")?.removingPercentEncoding else {
            return Self.placeholder()
        }
        let mbid = request.uri.queryParameters.get("mbid").flatMap { $0.count == 36 ? $0 : nil }
        guard let address = await address(user: person.name, artist: artist, name: name, mbid: mbid, concealing: person.concealment) else {
            // Try again later: the album may gain art, or Last.fm may be back.
            return Response(status: .found, headers: [.location: Paths.placeholderCover, .cacheControl: "max-age=600"])
        }
        return Response(status: .found, headers: [.location: address.localPath, .cacheControl: "public, max-age=86400"])
    }

    func art(_ context: Context) async throws -> Response {
        guard let size = context.parameters.get("size"), let file = context.parameters.get("file"),
              let address = ArtworkAddress(routeSize: size, fileName: file) else {
            throw HTTPError(.notFound)
        }
        do {
            let image = try await artwork.image(for: address)
            return Response(status: .ok, headers: [.contentType: image.contentType, .cacheControl: "public, max-age=31536000, immutable"],
                            body: .init(byteBuffer: ByteBuffer(bytes: image.bytes)))
        } catch {
            return Response(status: .found, headers: [.location: Paths.placeholderCover, .cacheControl: "max-age=600"])
        }
    }

    static func theme(_ context: Context) -> Response {
        let parts = [context.parameters.get("bg"), context.parameters.get("text"),
                     context.parameters.get("secondary").map { $0.hasSuffix(".css") ? String($0.dropLast(4)) : $0 }]
        let hex = parts.compactMap { $0 }.filter { $0.count == 6 && $0.allSatisfy(\.isHexDigit) }
        guard hex.count == 3 else { return Response(status: .notFound) }
        let css = ":root { --album-bg: #\(hex[0]); --album-fg: #\(hex[1]); --album-muted: #\(hex[2]); }\n"
        return Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=31536000, immutable"],
                        body: .init(byteBuffer: ByteBuffer(string: css)))
    }

    /// The `/theme/` stylesheet address for `colours`.
    static func themePath(_ colours: AlbumColours) -> String {
        func hex(_ c: RGB) -> String { String(format: "%02x%02x%02x", c.red, c.green, c.blue) }
        return "/theme/\(hex(colours.background))/\(hex(colours.text))/\(hex(colours.secondaryText)).css"
    }

    /// A neutral square shown while art loads or when there is none.
    static func placeholder() -> Response {
        Response(status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "public, max-age=86400"],
                 body: .init(byteBuffer: ByteBuffer(string: placeholderSVG)))
    }

    static var placeholderSVG: String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" fill="#8a857c" opacity=".35"/>\
        <circle cx="32" cy="32" r="18" fill="none" stroke="#8a857c" stroke-width="2" opacity=".6"/>\
        <circle cx="32" cy="32" r="4" fill="#8a857c" opacity=".6"/></svg>
        """
    }
}
