import HTTPServing
import Stores
import Sync
import VinylogueCore

/// The users list screen: onboarding when nobody is listed, else everyone
/// in the person's order with their actions.
struct UsersPage {
    struct Row {
        let name: String
        let key: String
        let chartURL: String
        let actionURL: String
        let isMe: Bool
        let isFirst: Bool
        let isLast: Bool
    }

    var layout: LayoutFields
    let onboarding: Bool
    let apiKeyConfigured: Bool
    let users: [Row]
    /// The name of "me", when someone is marked so.
    let me: String?
    var formError: String?
    var formValue: String?
    var notice: String?
    /// The account's name when the viewer signed in (offers signing out).
    var signedInAs: String?
    /// Whether the built-in demo is on: its people need no API key, which
    /// the note about adding Last.fm users then says.
    var demoOn = false

    init(users listed: [ListedUser], csrf: String, apiKeyConfigured: Bool) {
        layout = LayoutFields(title: listed.isEmpty ? "Welcome" : "Users", csrf: csrf)
        onboarding = listed.isEmpty
        self.apiKeyConfigured = apiKeyConfigured
        users = listed.enumerated().map { index, user in
            Row(name: user.name, key: user.key, chartURL: Paths.chart(user.username), actionURL: Paths.userAction(user.username),
                isMe: user.isMe, isFirst: index == 0, isLast: index == listed.count - 1)
        }
        me = listed.first(where: \.isMe)?.name
        canImport = apiKeyConfigured && me != nil && me?.lowercased() != DemoHistory.username.key
    }

    /// Whether "import friends" is offered: it needs a key and a real "me".
    let canImport: Bool

    /// The sentence shown under the form when adding `raw` failed.
    static func addError(_ raw: String, _ error: SourceError) -> String {
        switch error {
        case .notFound: "There is no Last.fm user called “\(raw)”. Check the spelling."
        case .missingAPIKey: "Adding Last.fm users needs an API key: start the server with LASTFM_API_KEY set (see Settings)."
        default: error.forVisitors
        }
    }
}

/// The home page of a server where people sign in, for a visitor who has
/// not: what Vinylogue is, and the way in.
struct WelcomePage {
    var layout: LayoutFields
    let signInURL = Paths.signIn

    init(csrf: String) {
        layout = LayoutFields(title: "Welcome", csrf: csrf)
    }
}
