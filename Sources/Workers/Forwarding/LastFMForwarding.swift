import Stores
import Sync
import Foundation
import LastFM
import VinylogueCore
import Workers

/// Forwarding to Last.fm: `track.scrobble` in batches of 50 with the
/// session the account got by signing in here, within the Last.fm client's
/// shared rate limit. Whether listens arrived is read back from the
/// account's recent tracks.
public struct LastFMForwarding: ForwardingUpstream {
    package let client: LastFMClient

    public init(client: LastFMClient) { self.client = client }

    public var target: ForwardingTarget { .lastFM }
    public var batchLimit: Int { LastFMClient.scrobbleBatchLimit }

    package static let signInAgain = "Last.fm no longer accepts this server's sign-in for your account: sign out and sign in with Last.fm again, then try the failed ones again."

    public func send(_ listens: [OutboxListen], as choice: ForwardingChoice) async -> ForwardingOutcome {
        guard let session = choice.lastFMSession else { return .refused(reason: Self.signInAgain) }
        do {
            let receipt = try await client.scrobble(listens.map { ($0.listen.scrobble, $0.listen.duration) }, sessionKey: session.key)
            var ignored: [Int64: String] = [:]
            for (index, reason) in receipt.ignored where index < listens.count { ignored[listens[index].id] = reason }
            return .delivered(ignored: ignored)
        } catch {
            return Self.outcome(of: error)
        }
    }

    public func playingNow(_ listen: ListenToForward, as choice: ForwardingChoice) async throws(SourceError) {
        guard let session = choice.lastFMSession else { throw .notFound(what: "Your Last.fm sign-in") }
        try await client.updateNowPlaying(listen.scrobble, duration: listen.duration, sessionKey: session.key)
    }

    /// What a failed `track.scrobble` means for the outbox.
    package static func outcome(of error: SourceError) -> ForwardingOutcome {
        switch error {
        case .rateLimited:
            return .retry(reason: error.message, after: .seconds(60), uncertain: false)
        case .api(let code, _) where [4, 9, 13, 14, 15, 17].contains(code):
            // Authentication failed, invalid session key, bad signature.
            return .refused(reason: signInAgain)
        case .invalidAPIKey, .missingAPIKey:
            return .refused(reason: "\(error.message) Whoever runs this server must fix its Last.fm API key; then try the failed ones again.")
        case .api(let code, _) where code == 6:
            return .refused(reason: "Last.fm refused these scrobbles as incomplete.")
        case .api:
            // Last.fm answered, and said no: nothing arrived.
            return .retry(reason: error.message, after: nil, uncertain: false)
        default:
            // A timeout, a cut connection, a 5xx or an unreadable answer:
            // Last.fm may have taken them.
            return .retry(reason: error.message, after: nil, uncertain: true)
        }
    }

    public func arrived(_ listens: [OutboxListen], as choice: ForwardingChoice) async throws(SourceError) -> Set<Int64> {
        guard let session = choice.lastFMSession, let user = Username(validating: session.name), !listens.isEmpty else { return [] }
        let instants = listens.map(\.listen.scrobble.instant)
        let wanted = Dictionary(grouping: listens) { ArrivalKey($0.listen.scrobble) }
        var found: Set<Int64> = []
        var page = 1
        while true {
            let answer = try await client.recentTracks(of: user, from: instants.min()!, to: instants.max()!, page: page, limit: 200)
            for scrobble in answer.scrobbles {
                for listen in wanted[ArrivalKey(scrobble)] ?? [] { found.insert(listen.id) }
            }
            if page >= answer.totalPages || found.count == listens.count || page >= 20 { break }
            page += 1
        }
        return found
    }
}

/// A listen as a service reports it back: its time, artist and track, the
/// names compared without regard to case.
package struct ArrivalKey: Hashable {
    package let instant: Int64
    package let artist: String
    package let track: String

    package init(_ scrobble: Scrobble) {
        instant = scrobble.instant
        artist = scrobble.artist.lowercased()
        track = scrobble.track.lowercased()
    }
}
