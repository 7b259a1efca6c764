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
    /// archive in one transaction, as `ScrobbleOrigin.received` (the
    /// archive's duplicate rule applies), then drops every answer this
    /// instance kept that was made without them (pages, cards, JSON), and
    /// puts them in the outbox of the services `owner` forwards to, all
    /// before the player hears "ok".
    func keepReceived(_ listens: [ListenToForward], of user: Username, owner: ListOwner) async throws(ReceivedListensFailure) {
        guard let archive else { throw .noArchive }
        guard !listens.isEmpty else { return }
        let scrobbles = listens.map(\.scrobble)
        do {
            try await archive.store(scrobbles, of: user, origin: .received)
        } catch {
            throw .storage(error.forVisitors)
        }
        // The user's pages and cards kept in memory were made without these listens.
        rendered.removePages(of: user)
        renderedCards.removePages(of: user)
        do {
            try await forwarding?.enqueue(listens, of: owner)
        } catch {
            throw .notQueued
        }
    }
}
