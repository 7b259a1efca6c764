import Foundation
import ListenIngest
import ServiceLifecycle
import Stores
import Sync
import VinylogueCore

/// In a fleet, applies what any instance announces (`FleetNotices`): drops
/// the pages, cards and JSON answers this instance kept of a person whose
/// listens changed, and shows what a person's player is playing now, so a
/// listen sent to one instance shows on the next page any instance makes;
/// reads who may see whom again when a person's choice or a list changed
/// elsewhere, or when notices may have been missed.
/// A service of the server, following the notices until it stops.
struct FleetNoticeListener: Service {
    let notices: any FleetNotices
    /// Where what another instance changed is handed on to what this one keeps.
    let changes: ListeningChanges
    let nowPlaying: NowPlaying
    /// Who may see whom, read again when it changed elsewhere.
    var audiences: Audiences?

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            await notices.follow { notice in self.apply(notice) }
        }
    }

    func apply(_ notice: FleetNotice) {
        let change = changes.heard(notice)
        switch notice {
        case .listensChanged:
            break
        case .playingNow(let name, let artist, let track, let album, let until):
            guard let user = Username(validating: name) else { return }
            nowPlaying.heard(NowPlaying.Track(artist: artist, track: track, album: album, until: Date(timeIntervalSince1970: TimeInterval(until))), for: user)
        case .audienceChanged:
            if let audiences { Task { await audiences.reloadLogged() } }
        case .erased:
            // Forgotten before who may see whom is read again: the erased
            // person's drawn cards go from this instance's disk too.
            Task {
                if let change { await changes.tidy(after: change) }
                await audiences?.reloadLogged()
            }
        case .listeningAgain:
            // Notices may have been missed while not listening: what was
            // kept may be out of date (forgotten above), and so may who sees whom.
            if let audiences { Task { await audiences.reloadLogged() } }
        }
    }
}
