import Foundation
import HTTPServing
import Hummingbird
import Stores
import VinylogueCore
import Workers

/// Settings' "Albums" section: "Treat editions of an album as one" (on by
/// default), what it joins in the person's own archive (a count and a
/// link to the list), and the switch.
struct AlbumFoldingView {
    let action: String
    let foldsEditions: Bool
    /// How many of the person's albums were played under several
    /// spellings, when their listening is archived.
    let joinedSentence: String?
    let previewURL: String?
    var changed: String?
    /// Every choice about a single album, each with "Undo".
    var choices: [AlbumChoicesView.Undo] = [] { didSet { hasChoices = !choices.isEmpty } }
    private(set) var hasChoices = false
    let choiceAction = Paths.albumChoices
    let back = Paths.settings + "#albums"
}

/// `/settings/albums`: every album of the person's archive played under
/// more than one spelling, with each spelling and its plays.
struct AlbumSpellingsView {
    struct Album {
        let artist: String
        let name: String
        let playsLabel: String
        let spellings: [Spelling]
    }

    struct Spelling {
        /// Its artist, when it differs from the album's.
        let otherArtist: String?
        let album: String
        let playsLabel: String
    }

    var layout: LayoutFields
    let intro: String
    let albums: [Album]
    let foldsEditions: Bool
    let more: String?
    /// Settings' "Albums" section, to go back to.
    let settingsURL = Paths.settings + "#albums"
}

extension SettingsRoutes {
    /// Whose albums the viewer chooses for: the account, or the
    /// household's "me"; nil for anyone else, or when there is no archive.
    func ownPerson(for context: Context) async -> Username? {
        guard albumFolding != nil else { return nil }
        return await ownListening(of: context)
    }

    func albumFoldingSection(for context: Context) async -> AlbumFoldingView? {
        guard let albumFolding, let user = await ownPerson(for: context) else { return nil }
        let folding = (try? await albumFolding.folding(of: user)) ?? .editions
        var archived = false
        if let archive, (try? await archive.span(for: user)) ?? nil != nil { archived = true }
        var view = AlbumFoldingView(action: Paths.albumFolding, foldsEditions: folding.foldsEditions,
                                joinedSentence: "Streaming services rename an album at each reissue (“(Remastered)”, “- 2011 Remaster”, "
                                    + "“[Deluxe Edition]”). With this on, every chart counts them as the one album they are; your "
                                    + "listens themselves stay exactly as they were scrobbled.",
                                previewURL: archived ? Paths.albumFolding : nil)
        if let archive {
            view.choices = await AlbumChoiceRoutes(refolding: albumFolding, archive: archive, own: OwnListening(lists: lists), pages: pages,
                                                   configuration: configuration).settingsList(of: user)
        }
        return view
    }

    /// `POST /settings/albums`: `editions=on|off`.
    func changeAlbumFolding(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        _ = try await owner(of: context)
        guard let albumFolding, let user = await ownPerson(for: context) else {
            throw SignInRequired(message: "Mark yourself on the list (or sign in with Last.fm) to choose how your albums are counted.")
        }
        let folding: AlbumFolding
        switch form["editions"] {
        case "on": folding = .editions
        case "off": folding = .asSpelled
        default: throw HTTPError(.badRequest, message: "Choose whether editions of an album count as one album.")
        }
        let changed = try await albumFolding.choose(folding, of: user)
        return .redirect(to: Paths.settings + "?albums=\(changed ? form["editions"]! : "same")#albums", type: .normal)
    }

    static func albumFoldingNotice(_ changed: String) -> String? {
        switch changed {
        case "on": "Editions of an album count as one album again. Your charts are being counted again; it takes a few seconds."
        case "off": "Every spelling counts as its own album now. Your charts are being counted again; it takes a few seconds."
        case "same": "Nothing changed."
        default: AlbumChoiceRoutes.notice(changed)
        }
    }

    /// `GET /settings/albums`: what the rule joins in the viewer's archive.
    func showAlbumSpellings(_ request: Request, _ context: Context) async throws -> Response {
        let csrf = CSRFProtection.token(for: request)
        _ = try await owner(of: context)
        guard let albumFolding, let archive, let user = await ownPerson(for: context) else {
            throw SignInRequired(message: "Mark yourself on the list (or sign in with Last.fm) to see how your albums are counted.")
        }
        let folding = (try? await albumFolding.folding(of: user)) ?? .editions
        let found = try await archive.albumSpellings(of: user) ?? []
        let joined = found.filter { $0.spellings.count > 1 }
        let shown = joined.prefix(Self.spellingsShown)
        let intro: String
        if joined.isEmpty {
            intro = "Every album in your archive was played under one spelling: there is nothing to join."
        } else {
            let count = joined.count == 1 ? "One album" : "\(grouped(joined.count)) albums"
            intro = folding.foldsEditions
                ? "\(count) of yours \(joined.count == 1 ? "was" : "were") played under several spellings. Each is counted as one album:"
                : "\(count) of yours \(joined.count == 1 ? "was" : "were") played under several spellings. Each spelling counts as its own "
                    + "album now; with “Treat editions of an album as one” on, these would be joined:"
        }
        let albums = shown.map { album in
            AlbumSpellingsView.Album(artist: album.artist, name: album.name, playsLabel: WeekLabels.plays(album.plays),
                                     spellings: album.spellings.map {
                                         AlbumSpellingsView.Spelling(otherArtist: $0.artist == album.artist ? nil : $0.artist, album: $0.album,
                                                                     playsLabel: WeekLabels.plays($0.plays))
                                     })
        }
        let more = joined.count > shown.count ? "And \(grouped(joined.count - shown.count)) more, played less." : nil
        let view = AlbumSpellingsView(layout: LayoutFields(title: "Albums counted as one", csrf: csrf.value), intro: intro, albums: albums,
                                      foldsEditions: folding.foldsEditions, more: more)
        var response = pages.response("album-spellings", view)
        response.attach(csrf: csrf)
        return response
    }

    /// At most this many albums are listed on the page.
    static let spellingsShown = 300
}
