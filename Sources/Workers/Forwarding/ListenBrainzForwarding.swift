import Stores
import Sync
import Foundation
import ListenBrainz
import VinylogueCore
import Workers

/// Forwarding to ListenBrainz: `submit-listens` with the user token the
/// person entered (checked with `validate-token` before it is kept), within
/// the client's `X-RateLimit-*` budget. Whether listens arrived is read
/// back from the user's public listens.
public struct ListenBrainzForwarding: TokenCheckingUpstream {
    package let client: ListenBrainzClient

    public init(client: ListenBrainzClient) { self.client = client }

    public var target: ForwardingTarget { .listenBrainz }
    /// ListenBrainz takes 1,000 in one import; 500 keeps each request small.
    public var batchLimit: Int { 500 }

    public static let enterANewToken = "ListenBrainz refused the token: enter a new one from your ListenBrainz settings on this page, then try the failed ones again."

    public func send(_ listens: [OutboxListen], as choice: ForwardingChoice) async -> ForwardingOutcome {
        guard let token = choice.listenBrainzToken else { return .refused(reason: Self.enterANewToken) }
        switch await client.submit(listens.map(\.listen.scrobble), token: token) {
        case .accepted:
            return .delivered(ignored: [:])
        case .temporaryFailure(let failure, let after):
            // A 429 stored nothing; after a 5xx, a timeout or a cut
            // connection ListenBrainz may have the listens.
            if case .rateLimited = failure { return .retry(reason: failure.message, after: after ?? .seconds(10), uncertain: false) }
            return .retry(reason: failure.message, after: after, uncertain: true)
        case .permanentFailure(.invalidToken):
            return .refused(reason: Self.enterANewToken)
        case .permanentFailure(let failure):
            return .refused(reason: failure.message)
        }
    }

    public func playingNow(_ listen: ListenToForward, as choice: ForwardingChoice) async throws(SourceError) {
        guard let token = choice.listenBrainzToken else { throw .listenBrainz(.invalidToken) }
        switch await client.playingNow(listen.scrobble, duration: listen.duration, token: token) {
        case .accepted: return
        case .temporaryFailure(let failure, _), .permanentFailure(let failure): throw .listenBrainz(failure)
        }
    }

    public func arrived(_ listens: [OutboxListen], as choice: ForwardingChoice) async throws(SourceError) -> Set<Int64> {
        guard let user = choice.listenBrainzUser, !listens.isEmpty else { return [] }
        let instants = listens.map(\.listen.scrobble.instant)
        let wanted = Dictionary(grouping: listens) { ArrivalKey($0.listen.scrobble) }
        var found: Set<Int64> = []
        // Newest first, below `maxTs` and above `minTs` (both exclusive).
        var maxTs = instants.max()! + 1
        let minTs = instants.min()! - 1
        for _ in 0..<20 {
            let page = try await client.listens(of: user, minTs: minTs, maxTs: maxTs, count: ListenBrainzClient.maxCount)
            for scrobble in page.listens {
                for listen in wanted[ArrivalKey(scrobble)] ?? [] { found.insert(listen.id) }
            }
            guard page.count == ListenBrainzClient.maxCount, let oldest = page.listens.map(\.instant).min(), oldest < maxTs,
                  found.count < listens.count else { break }
            maxTs = oldest
        }
        return found
    }

    public func owner(ofToken token: String) async throws(SourceError) -> String {
        guard let user = try await client.validate(token: token) else { throw .listenBrainz(.invalidToken) }
        return user
    }
}
