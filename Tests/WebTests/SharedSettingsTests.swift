import Foundation
@testable import HTTPServing
@testable import ListenIngest
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueCore
@testable import Web

/// Two servers on one data directory: a setting saved by one is seen by
/// the other within a second (it used to need a restart).
@Suite struct SharedSettingsTests {
    @Test func aChangeSavedByAnotherServerIsSeenWithinTheRefreshInterval() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-settings-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock(july2023)
        let first = try await CurrentSettings(store: SQLiteListStore(try ArchiveDatabase(directory: directory)), clock: clock.wallClock)
        let second = try await CurrentSettings(store: SQLiteListStore(try ArchiveDatabase(directory: directory)), clock: clock.wallClock)
        #expect(await second.current().filter.threshold == 0)
        try await first.save(Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
        #expect(await first.current().filter.threshold == 4)
        clock.advance(days: 1.0 / 86400)
        // Past the interval the copy is still served, without waiting for
        // the database, and read again behind it.
        #expect(await second.current().filter.threshold == 0)
        await second.refreshed()
        let seen = await second.current()
        #expect(seen.filter.threshold == 4)
        #expect(seen.timeZoneIdentifier == "Europe/Berlin")
        #expect(seen.fingerprint != Settings().fingerprint)
    }
}
