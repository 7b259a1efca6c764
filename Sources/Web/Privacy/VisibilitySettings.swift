import Foundation
import HTTPServing
import Hummingbird
import Logging
import Stores
import VinylogueCore

/// `POST /settings/visibility`: the signed-in person chooses who sees their
/// listening (`Visibility`). The choice is stored, applied here at once,
/// announced to the other instances of a fleet, and the pages kept of the
/// person are dropped everywhere.
struct VisibilitySettings: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    let store: any VisibilityStore
    let audiences: Audiences
    /// Where the change is announced: the pages kept of the person, here
    /// and on the fleet's other instances, are forgotten.
    let changes: ListeningChanges
    let pages: PageRenderer
    let configuration: ServerConfiguration
    let logger = Logger(label: "vinylogue.visibility")

    func register(on router: Router<WebRequestContext>) {
        router.post(RouterPath(Paths.visibility)) { request, context in try await self.change(request, context) }
    }

    func change(_ request: Request, _ context: Context) async throws -> Response {
        let (form, account) = try await viewers.accountForm(request, context, limit: configuration.maxBodyBytes,
                                                            signInFirst: "Sign in with Last.fm to choose who sees your listening.")
        guard let chosen = form["visibility"].flatMap(Visibility.init(rawValue:)) else {
            return .redirect(to: Paths.settings + "?visibility=unknown#visibility", type: .normal)
        }
        do {
            try await store.setVisibility(chosen, of: account)
        } catch {
            logger.error("could not save who may see an account: \(String(reflecting: error))")
            return pages.response("message", MessagePage.settings(title: "Not changed", heading: "Who sees your listening was not changed",
                                                       message: "The database could not be changed, so your listening is shown as before. Try again in a moment.",
                                                       section: "visibility"), status: .serviceUnavailable)
        }
        await audiences.apply(chosen, of: account)
        await changes.changed(.audience(account.name))
        return .redirect(to: Paths.settings + "?visibility=saved#visibility", type: .normal)
    }
}

/// The Settings section that chooses who sees one's listening.
struct VisibilityView {
    struct Choice {
        let choiceValue: String
        let choiceLabel: String
        let choiceAbout: String
        let choiceChecked: Bool
    }

    let visibilityAction: String
    let visibilityPath: String
    let visibilityChoices: [Choice]
    var visibilityChanged: String?
    /// The code to show one's widget on one's own page.
    var widget: WidgetSnippets?

    init(current: Visibility, person: Username) {
        visibilityAction = Paths.visibility
        visibilityPath = Paths.chart(person)
        visibilityChoices = Visibility.allCases.map { choice in
            Choice(choiceValue: choice.rawValue, choiceLabel: Self.label(choice), choiceAbout: Self.about(choice), choiceChecked: choice == current)
        }
    }

    static func label(_ choice: Visibility) -> String {
        switch choice {
        case .everyone: "Everyone"
        case .friends: "Friends"
        case .onlyMe: "Only me"
        }
    }

    static func about(_ choice: Visibility) -> String {
        switch choice {
        case .everyone: "anyone with the address, as Last.fm shows your scrobbles."
        case .friends: "people signed in here who have you on their list and whom you have on yours."
        case .onlyMe: "you alone, when you are signed in."
        }
    }
}

extension SettingsRoutes {
    func visibility(for request: Request, _ context: SettingsRoutes.Context) async -> VisibilityView? {
        guard case .account(let account) = await context.viewer, let audiences else { return nil }
        let current = (try? await audiences.store.visibility(of: account)) ?? audiences.current.visibility(of: account)
        var view = VisibilityView(current: current, person: account.name)
        view.widget = WidgetSnippets(user: account.name, base: address.base)
        switch request.uri.queryParameters.get("visibility") {
        case "saved"?: view.visibilityChanged = "Saved: your listening is shown to " + Self.audienceSentence(current) + "."
        case "unknown"?: view.visibilityChanged = "Choose one of the three."
        default: break
        }
        return view
    }

    static func audienceSentence(_ visibility: Visibility) -> String {
        switch visibility {
        case .everyone: "everyone"
        case .friends: "your friends here"
        case .onlyMe: "you alone"
        }
    }
}
