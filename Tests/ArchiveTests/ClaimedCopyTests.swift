import Foundation
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
@testable import Stores
@testable import Sync
import Workers

/// A copy run under its claim stops, at the next page, once the claim is
/// no longer its own, instead of walking every page beside the new holder.
@Suite struct ClaimedCopyTests {
    @Test(.timeLimit(.minutes(1))) func aCopyWhoseClaimIsTakenOverStopsAtTheNextPage() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url.appendingPathComponent("data"))
        let copies = SQLiteHistoryCopyStore(database)
        let tomo = try Username("lb:tomo")
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let clock = WallClock.fixed(now)
        let asked = Mutex(0)
        // Windows of 10 listens a minute apart, going back for ever: the
        // copy ends only when it is stopped. At the third window another
        // worker takes the copy over (its lease long gone, by its clock).
        let history = ListenBrainzHistory { _, _, maxTs, count throws(SourceError) in
            let n = asked.withLock { $0 += 1; return $0 }
            if n == 3 {
                _ = try? await copies.claim(tomo, as: "elsewhere", at: now.addingTimeInterval(3600), lease: 600, takingOverFrom: { _ in false })
            }
            let top = min(maxTs - 1, Int64(now.timeIntervalSince1970))
            let listens = (0..<Int64(count)).map { Scrobble(instant: top - $0 * 60, artist: "Low", album: "C'mon", track: "T\($0)") }
            return (listens, listens.count)
        }
        let sync = ScrobbleSync(store: SQLiteScrobbleStore(database: database), upstream: history, clock: clock, pageSize: 10)
        let copying = ClaimedCopy(copies: copies, clock: clock)
        let claim = try #require(try await copying.claim(tomo))
        await #expect(throws: SourceError.self) { _ = try await copying.run(claim, sync) }
        // Stopped at the page after the one whose renewal found the claim lost.
        #expect(asked.withLock { $0 } <= 4)
        let copy = try #require(try await copies.copy(of: tomo))
        #expect(copy.state == .copying)
        #expect(try await copies.claim(tomo, as: "third", at: now.addingTimeInterval(3700), lease: 600, takingOverFrom: { _ in false }) == nil)
    }
}
