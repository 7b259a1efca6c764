import Archive
import Foundation
import VinylogueCore

/// Why received listens could not be kept (each API says it its own way).
enum ReceivedListensFailure: Error {
    /// This server keeps no archive.
    case noArchive
    /// The archive refused them; nothing was stored.
    case storage(String)
}

extension ServerDependencies {
    /// Keeps listens a player sent (through `/1/` or `/2.0/`) in `user`'s
    /// archive in one transaction, as `ScrobbleOrigin.received` (the
    /// archive's duplicate rule applies), then drops every answer this
    /// instance kept that was made without them (pages, cards, JSON).
    func keepReceived(_ scrobbles: [Scrobble], of user: Username) async throws(ReceivedListensFailure) {
        guard let archive else { throw .noArchive }
        guard !scrobbles.isEmpty else { return }
        do {
            try await archive.store(scrobbles, of: user, origin: .received)
        } catch {
            throw .storage(error.forVisitors)
        }
        // The user's pages and cards kept in memory were made without these listens.
        rendered.removePages(of: user)
        renderedCards.removePages(of: user)
    }
}
