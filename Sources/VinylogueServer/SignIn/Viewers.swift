import Hummingbird
import Stores

/// Who is asking, and the settings their pages are made with: the
/// household's when nobody signs in, else the account's of the session
/// cookie (a visitor has the household's settings and no list).
struct Viewers: Sendable {
    /// Nil when nobody signs in (household mode).
    let signIn: SignInSessions?
    let settings: CurrentSettings

    func viewer(of request: Request) async -> Viewer {
        guard let signIn else { return .household }
        return await signIn.viewer(of: request)
    }

    /// A Settings form posted by a signed-in account: its fields (within
    /// `limit`, the CSRF token checked) and the account; `SignInRequired`
    /// saying `signInFirst` for anyone else.
    func accountForm(_ request: Request, limit: Int, signInFirst: String) async throws -> (FormFields, Account) {
        let form = try await FormFields.read(request, limit: limit)
        try CSRFProtection.verify(request, form: form)
        guard case .account(let account) = await viewer(of: request) else { throw SignInRequired(message: signInFirst) }
        return (form, account)
    }

    func settings(for request: Request) async -> Settings {
        await settings.current(for: await viewer(of: request).owner)
    }
}
