import Hummingbird
import VinylogueCore

extension HTTPResponse.Status {
    /// The one status every screen (chart, every-year, album, feed, JSON
    /// API) answers a source failure with: 404 when there is nothing to
    /// show for that name, 503 when this Vinylogue cannot ask (no or bad API
    /// key, its own storage, or a wait it gave up on), 502 when the upstream
    /// failed.
    init(for failure: SourceError) {
        switch failure {
        case .notFound, .privateProfile, .notArchived:
            self = .notFound
        case .missingAPIKey, .invalidAPIKey, .storage, .diskFull, .unreadableFile, .stillWaiting:
            self = .serviceUnavailable
        case .rateLimited, .temporarilyUnavailable, .timeout, .transport, .malformedResponse, .api:
            self = .badGateway
        }
    }

    /// 200 without a failure; else the failure's status.
    init(failure: SourceError?) {
        self = failure.map(Self.init(for:)) ?? .ok
    }
}
