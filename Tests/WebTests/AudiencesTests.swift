import Foundation
@testable import HTTPServing
@testable import ListenIngest
import Stores
import Synchronization
import Testing
import VinylogueCore
@testable import Web

/// Who may see whom, in memory, read again after every change.
@Suite struct AudiencesTests {
    /// The visibility table, with one read that can be held back.
    final class HeldStore: VisibilityStore, Sendable {
        let stored = Mutex<[Restriction]>([])
        /// The rows the held read saw when it began; nil: no read is held.
        let held = Mutex<[Restriction]?>(nil)
        let readBegan = AsyncStream<Void>.makeStream(), released = AsyncStream<Void>.makeStream()

        func visibility(of account: Account) async throws -> Visibility {
            stored.withLock { rows in rows.first { $0.account == account }?.visibility ?? .everyone }
        }
        func setVisibility(_ visibility: Visibility, of account: Account) async throws {
            stored.withLock { rows in
                rows.removeAll { $0.account == account }
                if visibility != .everyone { rows.append(Restriction(account: account, visibility: visibility, friends: [])) }
            }
        }
        func restrictions() async throws -> [Restriction] {
            let snapshot = stored.withLock { $0 }
            guard held.withLock({ $0 == nil ? false : true }) else { return snapshot }
            held.withLock { $0 = nil }
            readBegan.continuation.yield()
            for await _ in released.stream { break }
            return snapshot
        }
    }

    /// A read that began while Vera hid and ended after she chose
    /// "Everyone" again put "Only me" back (a fleet notice's reload racing
    /// her choice): the stranger saw the unknown-name page.
    @Test(.timeLimit(.minutes(1))) func aReadThatBeganBeforeANewerChoiceNeverPutsTheOldOneBack() async throws {
        let store = HeldStore()
        let vera = Account(id: 7, name: try Username("Vera"))
        try await store.setVisibility(.onlyMe, of: vera)
        let audiences = try await Audiences(store: store)
        #expect(audiences.isRestricted(vera.name))

        store.held.withLock { $0 = [] }
        let late = Task { await audiences.reloadLogged() }
        for await _ in store.readBegan.stream { break }
        try await store.setVisibility(.everyone, of: vera)
        await audiences.apply(.everyone, of: vera)
        #expect(!audiences.isRestricted(vera.name))
        store.released.continuation.finish()
        await late.value
        #expect(!audiences.isRestricted(vera.name), "the late read's old rules were installed over the newer choice")
        #expect(!audiences.restrictsAnyone)
    }
}
