import Foundation
import GRDB
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
    public let store: ScrobbleStore

    public init(history: DemoHistory = DemoHistory(), user: Username = DemoHistory.username, store: ScrobbleStore) {
        self.history = history
        self.user = user
        self.store = store
    }

    /// Stores every week closed by `now` that is not stored yet; returns
    /// how many scrobbles were added.
    @discardableResult
    public func fill(now: Date) throws(SourceError) -> Int {
        let weeks = history.chartList(now: Int64(now.timeIntervalSince1970.rounded(.down))).weeks
        let (userID, through) = try store.write { db in
            let id = try ScrobbleStore.ensureUserID(of: user, in: db)
            let through = try Int64.fetchOne(db, sql: "SELECT generated_through FROM generated_history WHERE user_id = ?", arguments: [id])
            return (id, through ?? history.firstWeek.from)
        }
        let missing = weeks.filter { $0.from >= through }
        var added = 0
        // About a year per transaction: few commits, bounded memory.
        var start = missing.startIndex
        while start < missing.endIndex {
            let end = min(start + 52, missing.endIndex)
            let slice = missing[start..<end]
            let scrobbles = slice.flatMap { history.scrobbles(in: $0) }
            let last = slice.last!.to
            let seed = Int64(bitPattern: history.seed)
            added += try store.write { db in
                let counts = try ScrobbleStore.insert(scrobbles, userID: userID, origin: .demo, in: db)
                try db.execute(sql: """
                    INSERT INTO generated_history (user_id, seed, first_week, generated_through) VALUES (?, ?, ?, ?)
                    ON CONFLICT(user_id) DO UPDATE SET generated_through = excluded.generated_through
                    """, arguments: [userID, seed, history.firstWeek.from, last])
                return counts.inserted
            }
            start = end
        }
        return added
    }
}
