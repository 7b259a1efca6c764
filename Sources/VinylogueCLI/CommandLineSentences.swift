import VinylogueCore

extension SourceError {
    /// What to do next, for someone at a terminal: commands and options
    /// they can run or set. (Web pages say it their own way.)
    public var nextStep: String {
        switch self {
        case .notFound: "Check the spelling of the username."
        case .privateProfile: "Ask them to make their recent listening public in Last.fm's privacy settings."
        case .invalidAPIKey: "Check LASTFM_API_KEY; a key can be created at https://www.last.fm/api/account/create."
        case .missingAPIKey:
            "Create a key at https://www.last.fm/api/account/create and set it with `export LASTFM_API_KEY=yourkey` (or use the demo: `vinylogue chart demo`)."
        case .rateLimited: "Wait a minute and try again."
        case .temporarilyUnavailable, .timeout, .stillWaiting: "Try again in a few minutes."
        case .transport: "Check the network connection (and LASTFM_API_URL, if set), then try again."
        case .malformedResponse: "Try again; if it keeps happening, Last.fm may be having problems."
        case .api: "Try again later."
        case .storage: "Check that the data directory (--data-dir) is a readable and writable folder, or run the import again."
        case .notArchived(let user): "Run `vinylogue sync \(user)` or `vinylogue import FILE --user \(user)` first."
        case .unreadableFile:
            "Give the path of an export file, a ZIP archive of exports as downloaded, or a directory of them (Last.fm, ListenBrainz, Spotify, Rockbox or Maloja)."
        case .diskFull:
            "Free some space on that disk (or pass --data-dir on another one) and run the command again; what was already stored is kept."
        case .listenBrainz(.userNotFound): "Check the spelling of the name after “lb:”."
        case .listenBrainz(.invalidToken): "Make a new token on ListenBrainz's settings page and use that."
        case .listenBrainz(.transport): "Check the network connection (and LISTENBRAINZ_API_URL, if set), then try again."
        case .listenBrainz(.refused): "Try again later."
        case .listenBrainz(.copying(let user)): "Wait for the copy to finish, or run `vinylogue sync \(user)`."
        case .listenBrainz: "Try again in a few minutes; what was already synced is kept."
        case .copyFailed(let user, _): "Run `vinylogue sync \(user)` to go on from where it stopped."
        case .cancelled: "Nothing to do: it was deleted or stopped on purpose; run the command again to start anew."
        }
    }

    /// What happened and what to do, as the command line prints it.
    public var forTerminal: String { "\(message) \(nextStep)" }
}
