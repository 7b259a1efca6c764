import Archive
import Foundation
import Hummingbird
import VinylogueCore

/// `/settings`: the play-count filter, the time zone, and whether a Last.fm
/// API key is configured.
struct SettingsRoutes: Sendable {
    typealias Context = BasicRequestContext

    let dependencies: ServerDependencies
    let configuration: ServerConfiguration

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
    }

    static let zones = TimeZone.knownTimeZoneIdentifiers.sorted()

    func register(on router: Router<Context>) {
        router.get(RouterPath(Paths.settings)) { request, _ in try await self.show(request) }
        router.post(RouterPath(Paths.settings)) { request, _ in try await self.save(request) }
    }

    func view(_ settings: Settings, csrf: String) -> View {
        View(layout: LayoutFields(title: "Settings", csrf: csrf),
             filters: PlayCountFilter.choices.map { n in
                 Option(value: n, label: n == 0 ? "Show every album" : "\(WeekLabels.plays(n)) or fewer", selected: settings.filter.threshold == n)
             },
             timeZone: settings.timeZone.identifier, zones: Self.zones, apiKeyConfigured: dependencies.apiKeyConfigured)
    }

    /// Whose settings `request` may see and change: a visitor who has not
    /// signed in has none.
    func owner(of request: Request) async throws -> ListOwner {
        guard let owner = await dependencies.viewer(of: request).owner else {
            throw SignInRequired(message: "Sign in with Last.fm to choose your own filter and time zone.")
        }
        return owner
    }

    func show(_ request: Request) async throws -> Response {
        let csrf = CSRFProtection.token(for: request)
        var view = view(await dependencies.settings.current(for: try await owner(of: request)), csrf: csrf.value)
        if request.uri.queryParameters.get("saved") != nil { view.notice = "Settings saved." }
        var response = dependencies.pages.response("settings", view)
        response.attach(csrf: csrf)
        return response
    }

    func save(_ request: Request) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: request)
        var settings = await dependencies.settings.current(for: owner)
        guard let threshold = form["filter"].flatMap(Int.init), PlayCountFilter.choices.contains(threshold) else {
            var view = view(settings, csrf: form["csrf"] ?? "")
            view.formError = "Choose one of the filter values offered."
            return dependencies.pages.response("settings", view, status: .unprocessableContent)
        }
        let zone = (form["timezone"] ?? "").trimmingWhitespace()
        if !zone.isEmpty, TimeZone(identifier: zone) == nil {
            var view = view(settings, csrf: form["csrf"] ?? "")
            view.formError = "“\(zone)” is not a time zone. Use a name such as Europe/Berlin or America/New_York."
            return dependencies.pages.response("settings", view, status: .unprocessableContent)
        }
        settings.filter = PlayCountFilter(threshold: threshold)
        settings.timeZoneIdentifier = zone.isEmpty ? nil : zone
        // Rendered pages are kept under the settings they were made with,
        // so the next page is made with these and nobody else's changes.
        try await dependencies.settings.save(settings, for: owner)
        return .redirect(to: Paths.settings + "?saved=1", type: .normal)
    }
}
