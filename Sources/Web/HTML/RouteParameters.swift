import Foundation
import Hummingbird
import VinylogueCore

/// Reading typed values out of a route's path: one way, one message.
enum RouteParameters {
    static let notAUsername = "That is not a Last.fm username: they are 2–15 letters, digits, “_” or “-”, starting with a letter."

    /// The `:user` segment as a username, or a 400 page saying what a
    /// username looks like.
    static func user(_ context: some RequestContext) throws -> Username {
        guard let user = context.parameters.get("user").flatMap(user) else { throw PageError.badRequest(notAUsername) }
        return user
    }

    /// A `:user` segment as a username: as written, else decoded (`lb%3Aname`
    /// is `lb:name`: `:` need not be escaped in a path, but may be). The
    /// one reading of a name in a path, `PersonMiddleware`'s too.
    static func user(_ raw: String) -> Username? {
        Username(validating: raw) ?? raw.removingPercentEncoding.flatMap(Username.init(validating:))
    }

    /// The chart kind a page or JSON address asks for with `?kind=`:
    /// albums when it asks for none (today's addresses), a 400 saying what
    /// the kinds are when it asks for one that does not exist (a typo
    /// should not quietly show albums under an "artists" link).
    static func kind(_ request: Request) throws -> ChartKind {
        try kind(request.uri.queryParameters)
    }

    /// The same, from a query already read.
    static func kind(_ query: Parameters) throws -> ChartKind {
        guard let raw = query.get("kind"), !raw.isEmpty else { return .album }
        guard let kind = ChartKind(rawValue: raw.lowercased()) else {
            let shown = raw.count > 40 ? raw.prefix(39) + "…" : raw[...]
            throw PageError.badRequest("“\(shown)” is not a kind of chart. Use kind=album, kind=artist or kind=track.")
        }
        return kind
    }

    /// What an album address asks for (`/u/:user/album/:artist/:album`,
    /// with `?week=` and `?mbid=`) in `timeZone`: the page and its card
    /// read it the same way. A 400 page when the address is incomplete.
    static func album(_ request: Request, _ context: WebRequestContext, timeZone: TimeZone) throws -> AlbumPage.Request {
        let user = try context.requiredPerson().name
        guard let artist = context.parameters.get("artist")?.removingPercentEncoding, !artist.isEmpty,
              let name = context.parameters.get("album")?.removingPercentEncoding, !name.isEmpty else {
            throw PageError.badRequest("That album address is not complete: it needs a user, an artist and an album.")
        }
        let day = request.uri.queryParameters.get("week").flatMap(WeekLabels(timeZone: timeZone).parseDay)
        let mbid = request.uri.queryParameters.get("mbid").flatMap { $0.count == 36 ? String($0) : nil }
        return AlbumPage.Request(user: user, artist: artist, name: name, mbid: mbid, day: day, timeZone: timeZone)
    }
}
