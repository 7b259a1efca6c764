import Foundation
import GRDB
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// Lists and settings gained an owner when accounts arrived; a household's
/// data from before then is the household's afterwards, untouched.
@Suite struct OwnerMigrationTests {
    @Test func aHouseholdsListAndSettingsSurviveTheMove() async throws {
        let queue = try DatabaseQueue()
        try ArchiveDatabase.migrator(progress: nil).migrate(queue, upTo: "v1-listed-users-and-settings")
        try await queue.write { db in
            for (position, name) in ["ybsc", "RJ", "demo"].enumerated() {
                try db.execute(sql: "INSERT INTO listed_user(key, name, position, isMe) VALUES (?, ?, ?, ?)",
                               arguments: [name.lowercased(), name, position, position == 1])
            }
            try db.execute(sql: "INSERT INTO setting(key, value) VALUES ('playCountFilter', '4'), ('timeZone', 'Europe/Berlin')")
        }
        try ArchiveDatabase.migrator(progress: nil).migrate(queue)

        let household = SQLiteListStore(writer: queue, owner: .household)
        #expect(try await household.users().map(\.name) == ["ybsc", "RJ", "demo"])
        #expect(try await household.users().filter(\.isMe).map(\.name) == ["RJ"])
        #expect(try await household.settings() == Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
        // An account starts empty, with the defaults, and its changes stay its own.
        let account = household.owned(by: .account(1))
        #expect(try await account.users().isEmpty)
        #expect(try await account.settings() == Settings())
        try await account.add(try Username("ybsc"))
        try await account.save(Settings(filter: PlayCountFilter(threshold: 1)))
        try await account.remove(try Username("ybsc"))
        #expect(try await household.users().count == 3)
        #expect(try await household.settings().filter.threshold == 4)
    }
}
