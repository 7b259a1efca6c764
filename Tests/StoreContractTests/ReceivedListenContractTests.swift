import Foundation
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The listens players send are kept and queued for forwarding in one
/// transaction, on SQLite and on PostgreSQL alike: both or neither. (On
/// PostgreSQL they were separate steps, and a failing outbox left listens
/// kept but not queued while the player was told to send them again.)
@Suite struct ReceivedListenContractTests {
    typealias Backend = StoreContractTests.Backend
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    static func listens(_ count: Int, from start: Int64 = 1_699_990_000) -> [ListenToForward] {
        (0..<count).map { i in
            ListenToForward(scrobble: Scrobble(instant: start + Int64(i) * 200, artist: "Low", album: "Things We Lost in the Fire",
                                               track: "Track \(i)"), duration: 180)
        }
    }

    @Test(arguments: Backend.allCases)
    func listensAndTheirOutboxRowsAreKeptTogether(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let user = try Username("listener")
            try await stores.outbox.setListenBrainz(token: "lb-token", user: "lb-listener", for: .household, at: Self.at)
            let queued = try await stores.received.keep(Self.listens(3), of: user, owner: .household,
                                                        forwardingAmong: [.listenBrainz, .lastFM], at: Self.at)
            // Only ListenBrainz is chosen: one row each, and the listens in the charts.
            #expect(queued == 3)
            #expect(try await stores.scrobbles.scrobbleCount(of: user) == 3)
            let week = LastFMWeekCalendar.week(containing: 1_699_990_000)
            #expect(try await stores.scrobbles.charts(.album, of: user, weeks: [week])?.first?.entries.first?.plays == 3)
            #expect(try await stores.outbox.states(of: .household)[.listenBrainz]?.waiting == 3)
            // Sent again, they are kept once and queued once.
            #expect(try await stores.received.keep(Self.listens(3), of: user, owner: .household, forwardingAmong: [.listenBrainz], at: Self.at) == 0)
            #expect(try await stores.scrobbles.scrobbleCount(of: user) == 3)
        }
    }

    @Test(arguments: Backend.allCases)
    func aFailingOutboxKeepsNothing(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let user = try Username("listener")
            try await stores.outbox.setListenBrainz(token: "lb-token", user: "lb-listener", for: .household, at: Self.at)
            _ = try await stores.received.keep(Self.listens(2), of: user, owner: .household, forwardingAmong: [.listenBrainz], at: Self.at)
            try await stores.breakOutbox()
            await #expect(throws: ReceivedListenFailure.self) {
                _ = try await stores.received.keep(Self.listens(4, from: 1_699_995_000), of: user, owner: .household,
                                                   forwardingAmong: [.listenBrainz], at: Self.at)
            }
            // Neither the listens nor their charts: only the two kept before.
            #expect(try await stores.scrobbles.scrobbleCount(of: user) == 2)
            let week = LastFMWeekCalendar.week(containing: 1_699_990_000)
            let chart = try await stores.scrobbles.charts(.track, of: user, weeks: [week])?.first
            #expect(chart?.entries.count == 2)
            #expect(try await stores.outbox.states(of: .household)[.listenBrainz]?.waiting == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func aTokenReplacedBeforehandKeepsNothing(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let user = try Username("listener")
            try await stores.listenTokens.replaceToken(of: .household, digest: "old", at: Self.at)
            try await stores.listenTokens.replaceToken(of: .household, digest: "new", at: Self.at.addingTimeInterval(1))
            let sender: @Sendable (ListenTokenHolder?) -> ListenSender? = { holder in holder.map { ListenSender(user: user, owner: $0.owner) } }
            let refused = try await stores.received.keep(Self.listens(2), sentWithToken: "old", sender: sender, forwardingAmong: [], at: Self.at)
            #expect(refused == nil)
            #expect(try await stores.scrobbles.scrobbleCount(of: user) == 0)
            let kept = try await stores.received.keep(Self.listens(2), sentWithToken: "new", sender: sender, forwardingAmong: [], at: Self.at)
            #expect(kept == KeptListens(sender: ListenSender(user: user, owner: .household), queued: 0))
            #expect(try await stores.scrobbles.scrobbleCount(of: user) == 2)
        }
    }

    /// 30 people each send two requests at once, the second repeating one
    /// listen of the first: every listen is kept once and queued once, the
    /// weekly charts count each once, and the queued counts the callers
    /// hear add up to the rows queued. (On PostgreSQL such requests are
    /// kept in shared groups, `PostgresListenGroups`.)
    @Test(arguments: Backend.allCases)
    func manyPeoplesListensSentAtOnceAreEachKeptAndQueuedOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            try await stores.outbox.setListenBrainz(token: "lb-token", user: "lb-listener", for: .household, at: Self.at)
            let people = try (0..<30).map { try Username("listener\($0)") }
            let queued = try await withThrowingTaskGroup(of: Int.self) { group in
                for (n, person) in people.enumerated() {
                    let first = Self.listens(2, from: 1_699_990_000 + Int64(n))
                    let second = [first[1]] + Self.listens(3, from: 1_699_990_000 + Int64(n)).suffix(1)
                    for listens in [first, second] {
                        group.addTask {
                            try await stores.received.keep(listens, of: person, owner: .household, forwardingAmong: [.listenBrainz], at: Self.at)
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(queued == 90)
            #expect(try await stores.outbox.states(of: .household)[.listenBrainz]?.waiting == 90)
            let week = LastFMWeekCalendar.week(containing: 1_699_990_000)
            for person in people {
                #expect(try await stores.scrobbles.scrobbleCount(of: person) == 3)
                let chart = try await stores.scrobbles.charts(.track, of: person, weeks: [week])?.first
                #expect(chart?.entries.map(\.plays) == [1, 1, 1], "\(person.value)")
                #expect(try await stores.scrobbles.charts(.album, of: person, weeks: [week])?.first?.entries.first?.plays == 3)
            }
        }
    }
}
