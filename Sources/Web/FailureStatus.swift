import Hummingbird
import VinylogueCore

extension HTTPResponse.Status {
    /// The one status every screen (chart, every-year, album, feed, JSON
    /// API) answers a source failure with: 404 when there is nothing to
    /// show for that name (unknown, private, not archived), 503 when the
    /// trouble is this Vinylogue's own (no or a bad API key, its storage or
    /// files, a wait it gave up on), 502 when Last.fm failed, 202 while a
    /// ListenBrainz person's history is being copied. Every case is
    /// listed, so a new one has to be placed here.
    init(for failure: SourceError) {
        switch failure {
        case .notFound, .privateProfile, .notArchived:
            self = .notFound
        case .missingAPIKey, .invalidAPIKey, .storage, .diskFull, .unreadableFile, .stillWaiting, .cancelled:
            self = .serviceUnavailable
        case .rateLimited, .temporarilyUnavailable, .timeout, .transport, .malformedResponse, .api, .copyFailed:
            self = .badGateway
        case .listenBrainz(.userNotFound):
            self = .notFound
        case .listenBrainz(.copying):
            // Not a failure: the history is on its way; ask again.
            self = .accepted
        case .listenBrainz(.invalidToken):
            self = .serviceUnavailable
        case .listenBrainz:
            self = .badGateway
        }
    }

    /// 200 without a failure; else the failure's status.
    init(failure: SourceError?) {
        self = failure.map(Self.init(for:)) ?? .ok
    }
}
