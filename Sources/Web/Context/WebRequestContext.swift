import Hummingbird
import Sync
import VinylogueCore

/// What every request of the web app carries besides the request itself:
/// who asks (`asker`, set by `ViewerMiddleware`, the viewer resolved at
/// most once per request), and, on a person's addresses (`/u/{user}/…`,
/// `/api/u/{user}/…`), whose page it is and what this viewer may see of
/// it (`person`, set once by `PersonMiddleware`). Routes read both here;
/// none reads the session cookie or parses the person's name itself.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Who asks. Every route is registered behind `ViewerMiddleware`,
    /// which sets it before anything reads it.
    var asker: Asker = .unknown
    /// Whose page the address names, on a person's addresses; nil
    /// elsewhere, and when the name is not one (`person()` says so).
    var person: PersonOnPage?

    init(source: Source) {
        coreContext = .init(source: source)
    }

    /// The viewer: from memory when the session is known (the household,
    /// a visitor without a session cookie), else the session's account,
    /// looked up once for the whole request.
    var viewer: Viewer {
        get async { await asker.viewer() }
    }

    /// The person a person's address names; a 400 page saying what a
    /// username looks like when it names none.
    func requiredPerson() throws -> PersonOnPage {
        guard let person else { throw PageError.badRequest(RouteParameters.notAUsername) }
        return person
    }

    /// Whom this request's answer must conceal: the person, when the
    /// viewer may not see them; nobody elsewhere.
    var concealment: Concealment { person?.concealment ?? .nobody }
}

/// Whose page a person's address names, and what the viewer may see of
/// it, decided once per request by `PersonMiddleware` before anything of
/// theirs is read.
struct PersonOnPage: Sendable {
    /// The name as the address writes it (decoded). A GET of a page in
    /// another casing than Last.fm's was sent to Last.fm's first, when it
    /// could be learned.
    let name: Username
    /// Whether the viewer may not see them: every answer is then the one
    /// for a name Last.fm does not know, byte for byte.
    let isConcealed: Bool
    /// Whether they restrict who sees them (their pages, shown to a viewer
    /// they chose, are private to that viewer).
    let isRestricted: Bool

    /// Whom the answer conceals: this person, or nobody.
    var concealment: Concealment { isConcealed ? .only(name) : .nobody }
}
