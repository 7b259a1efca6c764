import Foundation
import HTTPServing
import HTTPTypes
import Hummingbird
import Imports
import MusicServers
import ListenIngest
import Stores
import Sync
import VinylogueCore
import Workers

/// `/settings`: the play-count filter, the time zone, whether a Last.fm
/// API key is configured, and the listen-submission token for the
/// ListenBrainz-compatible API (`POST /settings/listen-token` makes a new one).
struct SettingsRoutes: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    let lists: any ListStore
    let listenTokens: ListenTokens?
    let forwarding: ListenForwarding?
    /// Copies of people's own histories, when the server makes them.
    let copies: HistoryCopyWorker?
    /// Exports uploaded here and imported in the background.
    let uploads: UploadedImports?
    /// People's choices of how their albums group.
    let albumFolding: AlbumRefolding?
    /// The archive, for deleting what a copy stored.
    let archive: (any ScrobbleArchive)?
    /// Where it is announced that what a copy stored was deleted.
    let changes: ListeningChanges
    let pages: PageRenderer
    let clock: WallClock
    /// Whether a Last.fm API key is set (people can be added from Last.fm).
    let apiKeyConfigured: Bool
    let configuration: ServerConfiguration
    /// The public address, which players are pointed at.
    let address: PublicAddress
    /// Who may see whom (with sign-in: each account chooses).
    let audiences: Audiences?
    /// The weekly digest by email; nil when no mail server is configured.
    let digests: WeeklyDigests?
    /// People's own music servers; nil when the web app reaches none.
    var musicServers: OwnMusicServers? = nil

    struct Option {
        let value: Int
        let label: String
        let selected: Bool
    }

    struct View {
        var layout: LayoutFields
        let filters: [Option]
        let timeZone: String
        let zones: [String]
        let apiKeyConfigured: Bool
        var notice: String?
        var formError: String?
        var listens: ListenAPIView?
        var forwarding: ForwardingView?
        var history: HistoryCopyView?
        var albums: AlbumFoldingView?
        var imports: ImportsView?
        var download: DownloadView?
        var deletion: DeleteAccountView?
        var visibility: VisibilityView?
        var digest: DigestView?
        var music: MusicServerView?
    }

    /// The listen-submission section: where to point a player, and the
    /// token (its value only right after it was made: only its digest is kept).
    struct ListenAPIView {
        let address: String
        let action: String
        let made: String?
        /// Whose archive the token's listens go to; nil: a household
        /// without "me", whose listens have nowhere to go yet.
        let user: String?
        var newToken: String?
    }

    static let zones = TimeZone.knownTimeZoneIdentifiers.sorted()

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.settings)) { request, context in try await self.show(request, context) }
        router.post(RouterPath(Paths.settings)) { request, context in try await self.save(request, context) }
        if listenTokens != nil {
            router.post(RouterPath(Paths.listenToken)) { request, context in try await self.renewToken(request, context) }
        }
        if forwarding != nil {
            router.post(RouterPath(Paths.forwarding)) { request, context in try await self.changeForwarding(request, context) }
        }
        if copies != nil {
            router.post(RouterPath(Paths.historyCopy)) { request, context in try await self.changeHistoryCopy(request, context) }
        }
        if musicServers != nil {
            router.post(RouterPath(Paths.musicServer)) { request, context in try await self.changeMusicServer(request, context) }
        }
        if albumFolding != nil {
            router.get(RouterPath(Paths.albumFolding)) { request, context in try await self.showAlbumSpellings(request, context) }
            router.post(RouterPath(Paths.albumFolding)) { request, context in try await self.changeAlbumFolding(request, context) }
        }
    }

    func view(_ settings: Settings, csrf: String) -> View {
        View(layout: LayoutFields(title: "Settings", csrf: csrf),
             filters: PlayCountFilter.choices.map { n in
                 Option(value: n, label: n == 0 ? "Show every album" : "\(WeekLabels.plays(n)) or fewer", selected: settings.filter.threshold == n)
             },
             timeZone: settings.timeZone.identifier, zones: Self.zones, apiKeyConfigured: apiKeyConfigured)
    }

    /// Whose settings `request` may see and change: a visitor who has not
    /// signed in has none.
    func owner(of context: Context) async throws -> ListOwner {
        guard let owner = await context.viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to choose your own filter and time zone.")
        }
        return owner
    }

    /// The listen section for `owner`, when the API is on.
    func listens(of owner: ListOwner, settings: Settings, context: Context) async -> ListenAPIView? {
        guard let tokens = listenTokens else { return nil }
        let made = (try? await tokens.store.tokenMade(by: owner)) ?? nil
        var user: String?
        switch await context.viewer {
        case .account(let account): user = account.name.value
        case .household: user = (try? await lists.owned(by: .household).users())?.first(where: \.isMe)?.name
        case .visitor: user = nil
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = settings.timeZone
        formatter.dateFormat = "d MMMM yyyy, HH:mm"
        return ListenAPIView(address: address.base, action: Paths.listenToken, made: made.map { formatter.string(from: $0) }, user: user)
    }

    /// The sections every settings page has besides the form: sending
    /// listens, and forwarding them.
    func addSections(to view: inout View, owner: ListOwner, settings: Settings, request: Request, context: Context) async {
        view.listens = await listens(of: owner, settings: settings, context: context)
        view.forwarding = await forwarding(of: owner, request: request, settings: settings)
        view.history = await historyCopy(for: context, settings: settings)
        view.albums = await albumFoldingSection(for: context)
        view.imports = await imports(of: owner, settings: settings)
        view.download = await download(for: context)
        view.deletion = await deletion(for: request, context)
        view.visibility = await visibility(for: request, context)
        view.digest = await digest(of: owner, settings: settings, request: request)
        view.music = await musicServerSection(of: owner, settings: settings)
    }

    func show(_ request: Request, _ context: Context) async throws -> Response {
        let csrf = CSRFProtection.token(for: request)
        let owner = try await owner(of: context)
        let settings = await viewers.settings.current(for: owner)
        var view = view(settings, csrf: csrf.value)
        await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
        if request.uri.queryParameters.get("saved") != nil { view.notice = "Settings saved." }
        if let changed = request.uri.queryParameters.get("forwarding") { view.forwarding?.changed = ForwardingView.notice(changed) }
        if let changed = request.uri.queryParameters.get("history") { view.history?.changed = Self.historyNotice(changed) }
        if let changed = request.uri.queryParameters.get("albums") { view.albums?.changed = Self.albumFoldingNotice(changed) }
        if let changed = request.uri.queryParameters.get("music") { view.music?.changed = Self.musicServerNotice(changed) }
        if request.uri.queryParameters.get("import") == "queued" {
            view.imports?.uploadNotice = "Your export is stored and will be imported in a moment; this page shows what came of it."
        }
        var response = pages.response("settings", view)
        response.attach(csrf: csrf)
        return response
    }

    func save(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: context)
        var settings = await viewers.settings.current(for: owner)
        guard let threshold = form["filter"].flatMap(Int.init), PlayCountFilter.choices.contains(threshold) else {
            var view = view(settings, csrf: form["csrf"] ?? "")
            await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
            view.formError = "Choose one of the filter values offered."
            return pages.response("settings", view, status: .unprocessableContent)
        }
        let zone = (form["timezone"] ?? "").trimmingWhitespace()
        if !zone.isEmpty, TimeZone(identifier: zone) == nil {
            var view = view(settings, csrf: form["csrf"] ?? "")
            await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
            view.formError = "“\(zone)” is not a time zone. Use a name such as Europe/Berlin or America/New_York."
            return pages.response("settings", view, status: .unprocessableContent)
        }
        settings.filter = PlayCountFilter(threshold: threshold)
        settings.timeZoneIdentifier = zone.isEmpty ? nil : zone
        // Rendered pages are kept under the settings they were made with,
        // so the next page is made with these and nobody else's changes.
        try await viewers.settings.save(settings, for: owner)
        return .redirect(to: Paths.settings + "?saved=1", type: .normal)
    }

    /// Makes a new listen-submission token for the viewer and shows it once;
    /// the old token stops working at once.
    func renewToken(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: context)
        guard let tokens = listenTokens else { throw HTTPError(.notFound) }
        let token = try await tokens.renew(for: owner)
        let settings = await viewers.settings.current(for: owner)
        var view = view(settings, csrf: form["csrf"] ?? "")
        await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
        view.listens?.newToken = token
        var response = pages.response("settings", view)
        // The token is in this page alone: no cache may keep it.
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
