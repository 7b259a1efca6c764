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
    static let users = "/users"
    static let usersReorder = "/users/reorder"
    static let friendsImport = "/friends/import"
    static let placeholderCover = "/static/placeholder.svg"
    static let signIn = "/signin"
    static let signOut = "/signout"

    /// A shipped asset, versioned so browsers may cache it forever.
    static func asset(_ file: String) -> String { "/static/\(file)?v=\(StaticAssets.version)" }

    static func chart(_ user: Username, yearsAgo: Int = 1) -> String {
        yearsAgo == 1 ? "/u/\(user.value)" : "/u/\(user.value)?years_ago=\(yearsAgo)"
    }

    static func week(_ user: Username, day: String) -> String { "/u/\(user.value)/week/\(day)" }

    static func history(_ user: Username) -> String { "/u/\(user.value)/history" }

    static func feed(_ user: Username) -> String { "/u/\(user.value)/feed.atom" }

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
    let stylesheet = Paths.asset("vinylogue.css")
    let script = Paths.asset("vinylogue.js")
}
