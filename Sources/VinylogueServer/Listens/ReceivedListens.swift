import Archive
import Foundation
import VinylogueCore

/// Why received listens could not be kept (each API says it its own way).
enum ReceivedListensFailure: Error {
    /// This server keeps no archive.
    case noArchive
    /// The archive refused them; nothing was stored.
    case storage(String)
    /// Kept, but not put in the forwarding outbox: sent again, they are
    /// kept once (the duplicate rule) and queued.
    case notQueued
}

extension ServerDependencies {
    /// Keeps listens a player sent (through `/1/` or `/2.0/`) in `user`'s
    /// archive as `ScrobbleOrigin.received` (the archive's duplicate rule
    /// applies) and puts them in the outbox of the services `owner`
    /// forwards to (`ReceivedListenStore`: on SQLite in one transaction),
    /// then drops every answer this instance kept that was made without
    /// them (pages, cards, JSON) and wakes the sender, all before the
    /// player hears "ok".
    func keepReceived(_ listens: [ListenToForward], of user: Username, owner: ListOwner) async throws(ReceivedListensFailure) {
        guard let receivedListens else { throw .noArchive }
        guard !listens.isEmpty else { return }
        let queued: Int
        do {
            queued = try await receivedListens.keep(listens, of: user, owner: owner, forwardingAmong: forwarding?.targets ?? [], at: clock.now)
        } catch {
            switch error {
            case .notKept(let failure): throw .storage(failure.forVisitors)
            case .keptNotQueued:
                rendered.removePages(of: user)
                renderedCards.removePages(of: user)
                throw .notQueued
            }
        }
        // The user's pages and cards kept in memory were made without these listens.
        rendered.removePages(of: user)
        renderedCards.removePages(of: user)
        if queued > 0 { forwarding?.wake() }
    }
}
