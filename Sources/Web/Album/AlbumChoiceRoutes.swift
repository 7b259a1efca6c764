import Foundation
import HTTPServing
import Hummingbird
import Stores
import VinylogueCore
import Workers

/// A person's choices about single albums, where they see them: the album
/// page's "Also played as" (each spelling with its plays and "Keep
/// apart", what was kept apart or joined with "Undo", and "Same album
/// as…"), the page that picks the album to join (`/settings/albums/same`),
/// Settings' list of every choice, and the one form they all post to
/// (`/settings/albums/choices`). Only the person whose listening it is
/// sees or makes them.
struct AlbumChoiceRoutes: Sendable {
    typealias Context = WebRequestContext

    let refolding: AlbumRefolding
    let archive: any ScrobbleArchive
    let own: OwnListening
    let pages: PageRenderer
    let configuration: ServerConfiguration

    func register(on router: Router<Context>) {
        router.post(RouterPath(Paths.albumChoices)) { request, context in try await self.change(request, context) }
        router.get(RouterPath(Paths.sameAlbum)) { request, context in try await self.showSameAlbum(request, context) }
    }

    // MARK: - The album page's section

    /// "Also played as" on `user`'s album page, for `user` alone; nil for
    /// anyone else, or when the album is not in their archive.
    func section(user: Username, artist: String, name: String, request: Request, context: Context, csrf: String) async -> AlbumChoicesView? {
        guard let me = await own.person(of: context), me.key == user.key else { return nil }
        guard let folding = try? await refolding.folding(of: user), let spelled = try? await archive.albumSpellings(of: user, artist: artist, album: name)
        else { return nil }
        let back = Paths.album(user, artist: artist, name: name, day: nil) + "#spellings"
        var view = AlbumChoicesView(action: Paths.albumChoices, csrf: csrf, back: back,
                                    sameURL: Paths.sameAlbum + Paths.query([("artist", artist), ("album", name)]),
                                    notice: request.uri.queryParameters.get("choice").flatMap(Self.notice))
        guard folding.foldsEditions else {
            view.offNote = "Each spelling counts as its own album, as you chose in Settings."
            return view
        }
        let several = spelled.spellings.count > 1
        view.spellings = spelled.spellings.map { spelling in
            AlbumChoicesView.Spelling(artist: spelling.artist, album: spelling.album,
                                      otherArtist: spelling.artist == spelled.artist ? nil : spelling.artist,
                                      playsLabel: AlbumPageView.playsGrouped(spelling.plays), canKeepApart: several,
                                      sameRelease: folding.tiedByRelease(artist: spelling.artist, album: spelling.album,
                                                                         toArtist: spelled.artist, toAlbum: spelled.name))
        }
        let key = folding.folded(.album, artist: artist, name: name).key
        let choices = (try? await refolding.choices(of: user)) ?? []
        view.undos = choices.compactMap { choice in
            Self.undo(choice, on: key, folding: folding).map { AlbumChoicesView.Undo(sentence: $0, kind: choice.kind.rawValue, key: choice.key) }
        }
        view.onlyItsOwn = !several && view.spellings.allSatisfy { $0.otherArtist == nil } && view.undos.isEmpty
        return view
    }

    /// The sentence that offers to undo `choice` (one of `folding`'s) on
    /// the page of the album keyed `key`; nil when the choice is not about
    /// that album.
    static func undo(_ choice: AlbumChoice, on key: String, folding: AlbumFolding) -> String? {
        switch choice.kind {
        case .apart:
            if key == AlbumFolding.apartPrefix + choice.key { return "“\(choice.album)” is kept apart from the album’s other editions." }
            // The album the spelling would be in without its own choice.
            let rule = AlbumIdentity.key(artist: choice.artist, album: choice.album) ?? ""
            guard folding.albumKey(ofRuleKey: rule) == key else { return nil }
            return "“\(choice.album)”\(by(choice.artist)) is kept apart from this album."
        case .join:
            guard let target = choice.target, target == key || folding.albumKey(ofRuleKey: target) == key else { return nil }
            return "“\(choice.album)”\(by(choice.artist)) is counted as this album."
        }
    }

    static func by(_ artist: String) -> String { " by \(artist)" }

    static func notice(_ choice: String) -> String? {
        switch choice {
        case "apart": "Kept apart. Your charts are being counted again; it takes a few seconds."
        case "joined": "Counted as one album now. Your charts are being counted again; it takes a few seconds."
        case "undone": "Undone. Your charts are being counted again; it takes a few seconds."
        case "same": "Nothing changed: that was already so."
        default: nil
        }
    }

    // MARK: - Settings' list

    /// Every choice `user` made, each with "Undo", for Settings → Albums.
    func settingsList(of user: Username) async -> [AlbumChoicesView.Undo] {
        let choices = (try? await refolding.choices(of: user)) ?? []
        return choices.map { choice in
            let sentence = switch choice.kind {
            case .apart: "“\(choice.album)”\(Self.by(choice.artist)) is kept apart from its other editions."
            case .join: "“\(choice.album)”\(Self.by(choice.artist)) is counted as “\(choice.targetAlbum ?? "")”"
                + (choice.targetArtist.map { $0 == choice.artist ? "." : Self.by($0) + "." } ?? ".")
            }
            return AlbumChoicesView.Undo(sentence: sentence, kind: choice.kind.rawValue, key: choice.key)
        }
    }

    // MARK: - The form

    /// `POST /settings/albums/choices`: `action=apart` (`artist`, `album`),
    /// `action=join` (`artist`, `album`, `to_artist`, `to_album`) or
    /// `action=undo` (`kind`, `key`); then back to `back` (a page of the
    /// person's own, else Settings).
    func change(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        guard let user = await own.person(of: context) else {
            throw SignInRequired(message: "Mark yourself on the list (or sign in with Last.fm) to choose how your albums are counted.")
        }
        let settingsBack = Paths.settings + "#albums"
        var back = Self.ownPage(form["back"], of: user) ?? settingsBack
        // Names only: a choice's key joins its parts with a control character.
        guard !["artist", "album", "to_artist", "to_album"].compactMap({ form[$0] }).contains(where: Self.hasControlCharacters) else {
            throw HTTPError(.badRequest, message: "Album and artist names cannot hold control characters. Choose the album on its page.")
        }
        let change: AlbumChoiceChange
        let done: String
        switch form["action"] {
        case "apart", "join":
            guard let artist = form["artist"], let album = form["album"], !album.trimmingCharacters(in: .whitespaces).isEmpty,
                  let weeks = try await archive.albumWeeks(of: user, artist: artist, album: album), !weeks.isEmpty else {
                throw HTTPError(.badRequest, message: "That album is not in your listening. Choose it on its page.")
            }
            if (try await refolding.choices(of: user)).count >= Self.mostChoices {
                throw HTTPError(.unprocessableContent, message: "You have made \(Self.mostChoices) choices about albums, as many as one person "
                    + "may keep. Undo some in Settings (Albums), then choose again.")
            }
        default: break
        }
        switch form["action"] {
        case "apart":
            change = .keepApart(artist: form["artist"]!, album: form["album"]!)
            done = "apart"
        case "join":
            let (artist, album) = (form["artist"]!, form["album"]!)
            let toArtist = (form["to_artist"] ?? "").trimmingCharacters(in: .whitespaces)
            let toAlbum = (form["to_album"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !toArtist.isEmpty, !toAlbum.isEmpty else {
                return notFound("Name the album it is the same as: its artist and its title.", artist: artist, album: album)
            }
            guard let weeks = try await archive.albumWeeks(of: user, artist: toArtist, album: toAlbum), !weeks.isEmpty else {
                return notFound("There is no album “\(toAlbum)” by \(toArtist) in your listening. Check its spelling, or pick one of yours "
                    + "from the list.", artist: artist, album: album)
            }
            change = .join(artist: artist, album: album, toArtist: toArtist, toAlbum: toAlbum)
            done = "joined"
            if back != settingsBack { back = Paths.album(user, artist: toArtist, name: toAlbum, day: nil) + "#spellings" }
        case "undo":
            guard let kind = form["kind"].flatMap(AlbumChoice.Kind.init(rawValue:)), let key = form["key"].flatMap({ $0.removingPercentEncoding }) else {
                throw HTTPError(.badRequest, message: "Choose the choice to undo.")
            }
            change = .undo(kind, key: key)
            done = "undone"
        default:
            throw HTTPError(.badRequest, message: "Choose what to do with the album.")
        }
        let changed = try await refolding.change(change, of: user)
        return .redirect(to: Self.adding(choice: changed ? done : "same", to: back), type: .normal)
    }

    /// How many choices about albums one person may keep: enough for any
    /// history, few enough that their pages stay quick.
    static let mostChoices = 1_000

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// `back` when it is one of `user`'s album pages or Settings: a form
    /// never sends anyone elsewhere. Such addresses are ASCII (names are
    /// percent-encoded), and nothing else is put in a `Location`.
    static func ownPage(_ back: String?, of user: Username) -> String? {
        guard let back, back.hasPrefix("/"), !back.hasPrefix("//"), !back.contains("\\"),
              back.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }),
              !back.contains("\""), !back.contains("<"), !back.contains(">") else { return nil }
        let path = back.split(separator: "#", maxSplits: 1).first.map(String.init) ?? back
        if path == Paths.settings { return back }
        let prefix = "/u/\(user.value)/album/"
        guard path.lowercased().hasPrefix(prefix.lowercased()), !path.contains("?") else { return nil }
        return back
    }

    /// `page` with `?choice=…` before its fragment (Settings says it in
    /// its own words: `?albums=…`).
    static func adding(choice: String, to page: String) -> String {
        let parts = page.split(separator: "#", maxSplits: 1).map(String.init)
        let fragment = parts.count > 1 ? "#" + parts[1] : ""
        let name = parts[0] == Paths.settings ? "albums" : "choice"
        return parts[0] + "?\(name)=\(choice)" + fragment
    }

    func notFound(_ message: String, artist: String, album: String) -> Response {
        var page = MessagePage(title: "Album not found", heading: "Which album is it the same as?", csrf: "", message: message)
        page.linkURL = Paths.sameAlbum + Paths.query([("artist", artist), ("album", album)])
        page.linkLabel = "Choose again"
        return pages.response("message", page, status: .unprocessableContent)
    }

    // MARK: - "Same album as…"

    /// `GET /settings/albums/same?artist=…&album=…`: the person's other
    /// albums by the same artist, each a button that joins this one to
    /// it, and a form for any other album of theirs (its titles offered
    /// as they type).
    func showSameAlbum(_ request: Request, _ context: Context) async throws -> Response {
        let csrf = CSRFProtection.token(for: request)
        guard let user = await own.person(of: context) else {
            throw SignInRequired(message: "Mark yourself on the list (or sign in with Last.fm) to choose how your albums are counted.")
        }
        let query = request.uri.queryParameters
        guard let artist = query.get("artist"), let album = query.get("album"), !album.isEmpty,
              let this = try await archive.albumSpellings(of: user, artist: artist, album: album) else {
            var page = MessagePage(title: "Album not found", heading: "Album not found", csrf: "",
                                   message: "This album is not in your listening, so it cannot be joined to another.")
            page.linkURL = Paths.settings + "#albums"
            page.linkLabel = "Back to Settings"
            return pages.response("message", page, status: .notFound)
        }
        // Joined by a spelling of its own: one of an album joined into it
        // would move that album alone.
        let folding = try await refolding.folding(of: user)
        let source: (artist: String, name: String) = this.spellings.first { folding.unjoined(artist: $0.artist, album: $0.album).key == this.key }
            .map { (artist: $0.artist, name: $0.album) } ?? (artist: this.artist, name: this.name)
        let albums = try await archive.albumSpellings(of: user) ?? []
        let artistKey = AlbumIdentity.artist(source.artist)
        let others = albums.filter { $0.key != this.key }
        let sameArtist = others.filter { AlbumIdentity.artist($0.artist) == artistKey }.prefix(200)
        let view = SameAlbumView(
            layout: LayoutFields(title: "Same album as…", csrf: csrf.value), sourceArtist: source.artist, sourceAlbum: source.name,
            action: Paths.albumChoices, back: Paths.album(user, artist: this.artist, name: this.name, day: nil) + "#spellings",
            candidates: sameArtist.map { SameAlbumView.Candidate(artist: $0.artist, album: $0.name, playsLabel: AlbumPageView.playsGrouped($0.plays)) },
            hasCandidates: !sameArtist.isEmpty,
            titles: others.prefix(500).map(\.name).uniqued())
        var response = pages.response("album-same", view)
        response.attach(csrf: csrf)
        return response
    }
}

/// Whose listening the viewer's own is: the account's, or the household's
/// "me" on a private instance; nil for a visitor.
struct OwnListening: Sendable {
    let lists: any ListStore

    func person(of context: WebRequestContext) async -> Username? {
        switch await context.viewer {
        case .account(let account): return account.name
        case .household:
            guard let me = (try? await lists.owned(by: .household).users())?.first(where: \.isMe) else { return nil }
            return try? Username(me.name)
        case .visitor: return nil
        }
    }
}

/// The album page's "Also played as".
struct AlbumChoicesView {
    struct Spelling {
        let artist: String
        let album: String
        /// Its artist, when it differs from the album's.
        let otherArtist: String?
        let playsLabel: String
        let canKeepApart: Bool
        /// Whether it is here because its listens carry the release of
        /// the album's (`AlbumReleases`), not by the rule.
        let sameRelease: Bool
    }

    struct Undo {
        let sentence: String
        let kind: String
        /// The choice's key, percent-encoded: a key is folded names, which
        /// may hold any character (a separator, a scrobbled control
        /// character the page would show as U+FFFD), and must come back
        /// exactly as it is stored.
        let key: String

        init(sentence: String, kind: String, key: String) {
            self.sentence = sentence
            self.kind = kind
            self.key = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        }
    }

    let action: String
    let csrf: String
    /// Where the forms come back to.
    let back: String
    let sameURL: String
    var notice: String?
    var offNote: String?
    var spellings: [Spelling] = []
    var undos: [Undo] = []
    /// Whether the album was only ever played under its own spelling and
    /// no choice is about it (then the page says so, not a list of one).
    var onlyItsOwn = false
    let settingsURL = Paths.settings + "#albums"
}

/// `/settings/albums/same`.
struct SameAlbumView {
    struct Candidate {
        let artist: String
        let album: String
        let playsLabel: String
    }

    var layout: LayoutFields
    /// The album being joined.
    let sourceArtist: String
    let sourceAlbum: String
    let action: String
    let back: String
    let candidates: [Candidate]
    let hasCandidates: Bool
    /// Titles of the person's albums, offered as they type.
    let titles: [String]
}

extension Sequence where Element: Hashable {
    /// Each element once, in order.
    func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
