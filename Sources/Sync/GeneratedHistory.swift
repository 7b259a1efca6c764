import Foundation
import Stores
import VinylogueCore

/// Puts the built-in demo's generated history into the archive, so the
/// demo user's charts come from the same place as everyone else's.
///
/// Idempotent and resumable: `generated_history` records the end of the
/// last week stored, in the same transaction as that week's scrobbles;
/// each run stores only the weeks that have closed since.
public struct GeneratedHistory: Sendable {
    public let history: DemoHistory
    public let user: Username
    public let store: any DemoSeed

    public init(history: DemoHistory = DemoHistory(), user: Username = DemoHistory.username, store: any DemoSeed) {
        self.history = history
        self.user = user
        self.store = store
    }

    /// Stores every week closed by `now` that is not stored yet; returns
    /// how many scrobbles were added. Generating a year of listening is
    /// CPU work: it runs on a thread of its own, never on Swift's pool.
    @discardableResult
    public func fill(now: Date) async throws(SourceError) -> Int {
        let weeks = history.chartList(now: Int64(now.timeIntervalSince1970.rounded(.down))).weeks
        let through = try await store.generatedThrough(of: user) ?? history.firstWeek.from
        let missing = weeks.filter { $0.from >= through }
        var added = 0
        // About a year per transaction: few commits, bounded memory.
        var start = missing.startIndex
        while start < missing.endIndex {
            let end = min(start + 52, missing.endIndex)
            let slice = Array(missing[start..<end])
            let history = self.history
            let scrobbles: [Scrobble]
            do {
                scrobbles = try await DedicatedThread.run(named: "vinylogue.demo") { slice.flatMap { history.scrobbles(in: $0) } }
            } catch {
                throw .storage(detail: "\(error)")
            }
            added += try await store.storeGenerated(scrobbles, of: user, through: slice.last!.to, seed: Int64(bitPattern: history.seed),
                                                    firstWeek: history.firstWeek.from)
            start = end
        }
        return added
    }
}
