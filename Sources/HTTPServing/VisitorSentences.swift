import VinylogueCore

extension SourceError {
    /// What a visitor of the web app can do about it: never a command or a
    /// setting only the person running the server could change; those are
    /// said to be for "whoever runs this Vinylogue". (The command line says
    /// it its own way.)
    public var nextStepForVisitors: String {
        switch self {
        case .notFound: "Check the spelling of the username."
        case .privateProfile: "Ask them to make their recent listening public in Last.fm's privacy settings."
        case .invalidAPIKey:
            "Whoever runs this Vinylogue needs to check its Last.fm API key; the demo works meanwhile."
        case .missingAPIKey:
            "Whoever runs this Vinylogue can add a Last.fm API key (see Settings); the demo works without one."
        case .rateLimited: "Wait a minute and try again."
        case .temporarilyUnavailable, .timeout: "Try again in a few minutes."
        case .stillWaiting: "Reload in a minute: the answer is kept as soon as it arrives."
        case .transport:
            "Try again in a few minutes; if it keeps happening, whoever runs this Vinylogue should check its network connection."
        case .malformedResponse: "Try again; if it keeps happening, Last.fm may be having problems."
        case .api: "Try again later."
        case .storage:
            "Try again in a moment; if it keeps happening, whoever runs this Vinylogue should check its data directory."
        case .notArchived(let user) where user.hasPrefix(Username.listenBrainzPrefix):
            "Their charts appear once Vinylogue has copied their listens from ListenBrainz; reload in a minute."
        case .notArchived:
            "Their charts come from Last.fm until whoever runs this Vinylogue archives their history."
        case .unreadableFile:
            "Choose the export file itself: a Last.fm CSV, a ListenBrainz listens file or a Spotify streaming history JSON file."
        case .diskFull:
            "Whoever runs this Vinylogue needs to free some disk space; everything already stored is kept."
        case .listenBrainz(.userNotFound): "Check the spelling of the name after “lb:”."
        case .listenBrainz(.invalidToken): "Whoever runs this Vinylogue needs to check the ListenBrainz token."
        case .listenBrainz(.refused): "Try again later."
        case .listenBrainz(.copying): "Reload in a minute."
        case .listenBrainz: "Try again in a few minutes."
        case .copyFailed: "Vinylogue tries again in a few minutes; reload then."
        case .cancelled: "Start it again from Settings if you still want it."
        }
    }

    /// Whether asking again may answer, so a page offers "Try again": not
    /// when only whoever runs the server can change the outcome (no API key,
    /// a rejected key or token), nor for a file or a job that is gone.
    public var retryMayHelp: Bool {
        switch self {
        case .missingAPIKey, .invalidAPIKey, .unreadableFile, .cancelled, .listenBrainz(.invalidToken): false
        default: true
        }
    }

    /// What happened and what to do, as a web page says it.
    public var forVisitors: String { "\(message) \(nextStepForVisitors)" }
}
