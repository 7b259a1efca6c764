import Foundation
import VinylogueCore

/// The app's URLs. These are permalinks people share: change with care.
enum Paths {
    static let segmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes one path segment or query value.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: segmentCharacters) ?? ""
    }

    static let home = "/"
    static let settings = "/settings"
    /// POST: makes a new listen-submission token (the old one stops working).
    static let listenToken = "/settings/listen-token"
    /// Forwarding of received listens: Last.fm on or off, the ListenBrainz
    /// token, trying failed listens again.
    static let forwarding = "/settings/forwarding"
    /// Starting and stopping the copy of one's own history.
    static let historyCopy = "/settings/history"
    /// Where a person's music server is saved or forgotten (`MusicServerSection`).
    static let musicServer = "/settings/music-server"
    /// GET: the albums one's archive holds under several spellings; POST:
    /// whether editions of an album count as one (`editions=on|off`).
    static let albumFolding = "/settings/albums"
    /// Keep apart, join, undo (`AlbumChoiceRoutes`).
    static let albumChoices = "/settings/albums/choices"
    /// Which album one is the same as.
    static let sameAlbum = "/settings/albums/same"
    /// Uploading an export.
    static let exportUpload = "/settings/import"
    static let personalExport = "/settings/export"
    static let deleteAccount = "/settings/delete-account"
    static let visibility = "/settings/visibility"
    /// The weekly digest's settings (`action` says which: save, now, stop, again).
    static let digest = "/settings/digest"
    static let digestConfirmPath = "/digest/confirm"
    static let digestUnsubscribePath = "/digest/unsubscribe"
    /// The link in a confirmation email (the token is hexadecimal).
    static func digestConfirm(token: String) -> String { digestConfirmPath + "?token=" + encode(token) }
    /// The unsubscribe link of every digest, which works without signing in.
    static func digestUnsubscribe(token: String) -> String { digestUnsubscribePath + "?token=" + encode(token) }
    static let users = "/users"
    static let usersReorder = "/users/reorder"
    static let friendsImport = "/friends/import"
    static let placeholderCover = "/static/placeholder.svg"
    static let signIn = "/signin"
    static let signOut = "/signout"

    /// A shipped asset, versioned so browsers may cache it forever.
    static func asset(_ file: String) -> String { "/static/\(file)?v=\(StaticAssets.version)" }

    static let everyonePath = "/everyone"

    /// This week N years ago for everyone on the viewer's list.
    static func everyone(yearsAgo: Int = 1) -> String {
        everyonePath + query([("years_ago", yearsAgo == 1 ? nil : String(yearsAgo))])
    }

    /// A chart address: `?years_ago=N` when N is not 1, then the kind and
    /// the filter of `options` (album, the default, keeps today's URLs).
    static func chart(_ user: Username, yearsAgo: Int = 1, _ options: ChartQuery = .albums) -> String {
        "/u/\(user.value)" + query([("years_ago", yearsAgo == 1 ? nil : String(yearsAgo))] + options.items)
    }

    static func week(_ user: Username, day: String, _ options: ChartQuery = .albums) -> String {
        "/u/\(user.value)/week/\(day)" + query(options.items)
    }

    static func history(_ user: Username, kind: ChartKind = .album) -> String {
        "/u/\(user.value)/history" + query(ChartQuery(kind: kind).items)
    }

    /// `?a=1&b=2` of the items that have a value, in order; "" when none has.
    static func query(_ items: [(name: String, value: String?)]) -> String {
        let pairs = items.compactMap { item in item.value.map { "\(item.name)=\(encode($0))" } }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    static func feed(_ user: Username) -> String { "/u/\(user.value)/feed.atom" }

    /// A person's year in review.
    static func year(_ user: Username, _ year: Int) -> String { "/u/\(user.value)/year/\(year)" }

    /// This week, `yearsAgo` years ago, to play again: its page (`PlaylistRoutes`).
    static func playlistPage(_ user: Username, yearsAgo: Int) -> String { playlistPage(user, .week(yearsAgo: yearsAgo)) }

    /// This week, `yearsAgo` years ago, as a playlist file (`PlaylistRoutes`).
    static func playlist(_ user: Username, yearsAgo: Int, _ format: PlaylistFile) -> String {
        playlist(user, .week(yearsAgo: yearsAgo), format)
    }

    /// What `subject` plays, to play again: its page (`PlaylistRoutes`).
    static func playlistPage(_ user: Username, _ subject: PlaylistSubject) -> String {
        "/u/\(user.value)/playlist/\(subject.segment)" + query(subject.queryItems)
    }

    /// What `subject` plays, as a playlist file (`PlaylistRoutes`).
    static func playlist(_ user: Username, _ subject: PlaylistSubject, _ format: PlaylistFile) -> String {
        "/u/\(user.value)/playlist/\(subject.segment).\(format.fileExtension)" + query(subject.queryItems)
    }

    /// What `subject` plays, as an M3U8 of the paths of the person's own mpd (`PlaylistRoutes`).
    static func playlistM3U8(_ user: Username, _ subject: PlaylistSubject) -> String {
        "/u/\(user.value)/playlist/\(subject.segment).m3u8" + query(subject.queryItems)
    }

    /// Albums played around this time of year and forgotten since.
    static func rediscover(_ user: Username) -> String { "/u/\(user.value)/rediscover" }

    /// A person's widget for other sites: its page (`format` nil), or its
    /// picture (`"png"`, `"svg"`).
    static func widget(_ user: Username, yearsAgo: Int = 1, format: String? = nil) -> String {
        "/u/\(user.value)/widget" + (format.map { "." + $0 } ?? "") + query([("years_ago", yearsAgo == 1 ? nil : String(yearsAgo))])
    }

    static func album(_ user: Username, artist: String, name: String, day: String?) -> String {
        "/u/\(user.value)/album/\(encode(artist))/\(encode(name))" + (day.map { "?week=\($0)" } ?? "")
    }

    static func cover(_ user: Username, artist: String, name: String, mbid: String?) -> String {
        "/u/\(user.value)/cover/\(encode(artist))/\(encode(name))" + (mbid.map { "?mbid=\(encode($0))" } ?? "")
    }

    /// A page's share card: `card.png` under the page's own path, with the
    /// page's query (`/u/RJ/album/A/B?week=…` → `/u/RJ/album/A/B/card.png?week=…`).
    static func card(of page: String) -> String {
        guard let mark = page.firstIndex(of: "?") else { return page + "/card.png" }
        return String(page[..<mark]) + "/card.png" + String(page[mark...])
    }

    static func userAction(_ user: ListedUserName) -> String { "\(users)/\(user.value)" }

    typealias ListedUserName = Username
}

/// The fixed links every template may use, as `{{layout.links.settings}}`
/// and so on: templates never spell a URL themselves.
struct SiteLinks: Sendable {
    let home = Paths.home
    let settings = Paths.settings
    let users = Paths.users
    let friendsImport = Paths.friendsImport
    let usersReorder = Paths.usersReorder
    let signIn = Paths.signIn
    let signOut = Paths.signOut
    let everyone = Paths.everyone()
    let stylesheet = Paths.asset("vinylogue.css")
    let script = Paths.asset("vinylogue.js")
}

/// What a chart address carries besides its week: which chart, and a
/// play-count filter asked for in the address itself (`min_plays`), so the
/// page's own links keep both. Album charts without a filter of their own
/// add nothing, which keeps the addresses people already share.
struct ChartQuery: Sendable, Hashable {
    var kind: ChartKind
    /// The `min_plays` the address asked for; nil when the viewer's setting applies.
    var minPlays: Int?

    init(kind: ChartKind = .album, minPlays: Int? = nil) {
        self.kind = kind
        self.minPlays = minPlays
    }

    static let albums = ChartQuery()

    /// The same with another kind.
    func with(kind: ChartKind) -> ChartQuery { ChartQuery(kind: kind, minPlays: minPlays) }

    var items: [(name: String, value: String?)] {
        [("kind", kind == .album ? nil : kind.rawValue), ("min_plays", minPlays.map(String.init))]
    }
}
