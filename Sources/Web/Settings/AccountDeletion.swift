import Foundation
import HTTPServing
import HTTPTypes
import Hummingbird
import Logging
import Stores
import Sync
import VinylogueCore
import Workers

/// `POST /settings/delete-account`: "Delete my account". The signed-in
/// person confirms by typing their Last.fm name; then everything of the
/// account goes in one transaction (`AccountEraser`), a copy of their
/// history in progress is stopped first, their uploaded files are deleted,
/// the pages kept of them are dropped here and, through the fleet's
/// notices, on every instance, and the browser's session ends.
struct AccountDeletion: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    let eraser: any AccountEraser
    let copies: HistoryCopyWorker?
    /// Where the deletion is announced: what this instance and the fleet's
    /// others kept of the account's pages goes, drawn cards too.
    let changes: ListeningChanges
    /// Who may see whom: the account's choice and friendships go with it.
    let audiences: Audiences
    let pages: PageRenderer
    let configuration: ServerConfiguration
    let logger = Logger(label: "vinylogue.accounts")

    func register(on router: Router<WebRequestContext>) {
        router.post(RouterPath(Paths.deleteAccount)) { request, context in try await self.delete(request, context) }
    }

    func delete(_ request: Request, _ context: Context) async throws -> Response {
        let signInFirst = "Sign in with Last.fm to delete your account."
        let (form, account) = try await viewers.accountForm(request, context, limit: configuration.maxBodyBytes, signInFirst: signInFirst)
        guard let sessions = viewers.signIn else { throw SignInRequired(message: signInFirst) }
        guard let typed = form.values["confirm"].flatMap(Username.init(validating:)), typed.key == account.name.key else {
            return .redirect(to: Paths.settings + "?delete=unconfirmed#delete", type: .normal)
        }
        if let copies { _ = try? await copies.stop(account.name) }
        let erased: ErasedAccount
        do {
            erased = try await eraser.erase(account)
        } catch {
            logger.error("could not delete an account: \(String(reflecting: error))")
            return pages.response("message", MessagePage.settings(title: "Not deleted", heading: "Your account was not deleted",
                                                       message: "The database could not be changed, so nothing was deleted. Try again in a moment.",
                                                       section: "delete"), status: .serviceUnavailable)
        }
        for path in erased.uploads { try? FileManager.default.removeItem(atPath: path) }
        await changes.changed(.erased(account.name))
        await audiences.reloadLogged()
        var page = MessagePage(title: "Account deleted", heading: "Your account is deleted",
                               csrf: "", message: "Everything of \(account.name.value) is gone from this Vinylogue: your listening archive, "
                                   + "your list and settings, your tokens and sessions, and your place on other people’s lists. "
                                   + "Signing in with Last.fm again starts a new account.")
        page.linkURL = Paths.home
        page.linkLabel = "Go to the start page"
        var response = pages.response("message", page)
        response.setCookie(sessions.clearedSessionCookie())
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// The Settings section that deletes the account.
struct DeleteAccountView {
    let deleteAction: String
    let accountName: String
    var deleteProblem: String?
}

extension SettingsRoutes {
    func deletion(for request: Request, _ context: SettingsRoutes.Context) async -> DeleteAccountView? {
        guard case .account(let account) = await context.viewer else { return nil }
        var view = DeleteAccountView(deleteAction: Paths.deleteAccount, accountName: account.name.value)
        if request.uri.queryParameters.get("delete") == "unconfirmed" {
            view.deleteProblem = "Nothing was deleted: type your Last.fm name, \(account.name.value), to confirm."
        }
        return view
    }
}
