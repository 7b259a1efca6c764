import Foundation
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The forwarding outbox's contract, against SQLite and PostgreSQL alike.
@Suite struct ForwardingOutboxContractTests {
    typealias Backend = StoreContractTests.Backend

    static func withOutbox(_ backend: Backend, _ body: @Sendable (any ForwardingOutbox, any AccountStore) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let database = try ArchiveDatabase()
            try await body(SQLiteForwardingOutbox(database), SQLiteAccountStore(database))
        case .postgres:
            try await StoreContractTests.withFreshPostgres { url in
                try await PostgresDatabase.with(url: url) { database in
                    try await body(PostgresForwardingOutbox(database), PostgresAccountStore(database))
                }
            }
        }
    }

    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func listens(_ count: Int, from start: Int64 = 1_749_990_000) -> [ListenToForward] {
        (0..<count).map { (i: Int) -> ListenToForward in
            let album: String = i % 2 == 0 ? "Album" : ""
            let mbid: String? = i == 0 ? "0a1b2c3d-0000-4000-8000-000000000001" : nil
            let duration: Int64? = i % 2 == 0 ? 180 : nil
            let scrobble = Scrobble(instant: start + Int64(i) * 200, artist: "Artist \(i % 3)", album: album, track: "Track \(i)", albumMBID: mbid)
            return ListenToForward(scrobble: scrobble, duration: duration)
        }
    }

    @Test(arguments: Backend.allCases)
    func choicesAreKeptPerOwnerWithTheAccountsSession(_ backend: Backend) async throws {
        try await Self.withOutbox(backend) { outbox, accounts in
            #expect(try await outbox.choice(of: .household) == ForwardingChoice())
            let (account, _) = try await accounts.signedIn(try Username("RJ"), lastFMSessionKey: "session-rj", at: Self.now)
            let owner = ListOwner.account(account.id)
            try await outbox.setForwardsToLastFM(true, for: owner, at: Self.now)
            try await outbox.setListenBrainz(token: "lb-token", user: "rj_lb", for: owner, at: Self.now)
            let choice = try await outbox.choice(of: owner)
            #expect(choice.toLastFM && choice.listenBrainzToken == "lb-token" && choice.listenBrainzUser == "rj_lb")
            #expect(choice.lastFMSession?.name == "RJ" && choice.lastFMSession?.key == "session-rj")
            #expect(choice.targets == [.lastFM, .listenBrainz])
            // The household has no Last.fm session: asking for Last.fm alone forwards nowhere.
            try await outbox.setForwardsToLastFM(true, for: .household, at: Self.now)
            #expect(try await outbox.choice(of: .household).targets.isEmpty)
            try await outbox.setListenBrainz(token: nil, user: "ignored", for: owner, at: Self.now)
            let cleared = try await outbox.choice(of: owner)
            #expect(cleared.listenBrainzToken == nil && cleared.listenBrainzUser == nil && cleared.toLastFM)
        }
    }

    /// Enqueued once per service; claimed in time order, one owner and
    /// service at a time, never twice while claimed; sent rows are counted.
    @Test(arguments: Backend.allCases)
    func listensAreClaimedOnceAndSettled(_ backend: Backend) async throws {
        try await Self.withOutbox(backend) { outbox, _ in
            let listens = Self.listens(7)
            #expect(try await outbox.enqueue(listens, of: .household, to: [.listenBrainz], at: Self.now) == 7)
            // A player sending the same listens again adds nothing.
            #expect(try await outbox.enqueue(Array(listens.reversed()), of: .household, to: [.listenBrainz], at: Self.now) == 0)
            #expect(try await outbox.nextDue() == Self.now)
            let first = try #require(try await outbox.claim(at: Self.now, lease: 60) { _ in 5 })
            #expect(first.target == .listenBrainz && first.owner == .household)
            #expect(first.listens.map(\.listen) == Array(listens.prefix(5)))
            #expect(first.listens.allSatisfy { !$0.uncertain && $0.attempts == 0 })
            let second = try #require(try await outbox.claim(at: Self.now, lease: 60) { _ in 5 })
            #expect(second.listens.map(\.listen) == Array(listens.suffix(2)))
            #expect(try await outbox.claim(at: Self.now, lease: 60) { _ in 5 } == nil)

            try await outbox.markSent(first.listens.map(\.id), at: Self.now)
            try await outbox.markWaiting([second.listens[0].id], until: Self.now.addingTimeInterval(30), reason: "ListenBrainz is busy", uncertain: false)
            try await outbox.markFailed([second.listens[1].id], reason: "ListenBrainz refused the token", at: Self.now)
            var state = try #require(try await outbox.states(of: .household)[.listenBrainz])
            #expect(state.sent == 5 && state.waiting == 1 && state.failed == 1 && state.lastSent == Self.now)
            #expect(state.problem == "ListenBrainz refused the token")
            #expect(try await outbox.nextDue() == Self.now.addingTimeInterval(30))
            #expect(try await outbox.claim(at: Self.now.addingTimeInterval(29), lease: 60) { _ in 5 } == nil)
            let retry = try #require(try await outbox.claim(at: Self.now.addingTimeInterval(30), lease: 60) { _ in 5 })
            #expect(retry.listens.map(\.listen) == [listens[5]] && retry.listens[0].attempts == 1)

            #expect(try await outbox.retryFailed(of: .household, target: .listenBrainz, at: Self.now) == 1)
            state = try #require(try await outbox.states(of: .household)[.listenBrainz])
            #expect(state.failed == 0 && state.waiting == 2)
        }
    }

    /// A claim whose sender stopped is taken again after its deadline, and
    /// its listens come back uncertain until the sender says otherwise;
    /// a timeout's uncertainty survives a later plain refusal.
    @Test(arguments: Backend.allCases)
    func anExpiredClaimComesBackUncertain(_ backend: Backend) async throws {
        try await Self.withOutbox(backend) { outbox, accounts in
            let (account, _) = try await accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: Self.now)
            let owner = ListOwner.account(account.id)
            try await outbox.enqueue(Self.listens(3), of: owner, to: [.lastFM, .listenBrainz], at: Self.now)
            let claimed = try #require(try await outbox.claim(at: Self.now, lease: 60) { _ in 50 })
            #expect(claimed.target == .lastFM && claimed.listens.count == 3 && claimed.owner == owner)
            // The other service's rows are not held by that claim.
            let other = try #require(try await outbox.claim(at: Self.now, lease: 60) { _ in 50 })
            #expect(other.target == .listenBrainz)
            try await outbox.markSent(other.listens.map(\.id), at: Self.now)
            #expect(try await outbox.claim(at: Self.now.addingTimeInterval(59), lease: 60) { _ in 50 } == nil)
            let again = try #require(try await outbox.claim(at: Self.now.addingTimeInterval(60), lease: 60) { _ in 50 })
            #expect(again.target == .lastFM && again.listens.map(\.id) == claimed.listens.map(\.id))
            let allUncertain = again.listens.allSatisfy(\.uncertain)
            #expect(allUncertain)
            let ids = again.listens.map(\.id)
            try await outbox.markWaiting(ids, until: Self.now.addingTimeInterval(60), reason: "timed out", uncertain: true)
            try await outbox.markWaiting(ids, until: Self.now.addingTimeInterval(60), reason: "429", uncertain: false)
            let third = try #require(try await outbox.claim(at: Self.now.addingTimeInterval(120), lease: 60) { _ in 50 })
            let thirdUncertain = third.listens.allSatisfy(\.uncertain)
            #expect(thirdUncertain && third.listens.allSatisfy { $0.attempts == 2 })
            try await outbox.markCertain([third.listens[0].id])
            try await outbox.markWaiting(third.listens.map(\.id), until: Self.now.addingTimeInterval(120), reason: "again", uncertain: false)
            let fourth = try #require(try await outbox.claim(at: Self.now.addingTimeInterval(180), lease: 60) { _ in 50 })
            #expect(fourth.listens.map(\.uncertain) == [false, true, true])
        }
    }

    /// The SQLite store takes back every claim at start (one process per
    /// file); a shared PostgreSQL database leaves them to their deadlines.
    @Test(arguments: Backend.allCases)
    func orphanedClaimsAtStart(_ backend: Backend) async throws {
        try await Self.withOutbox(backend) { outbox, _ in
            try await outbox.enqueue(Self.listens(2), of: .household, to: [.listenBrainz], at: Self.now)
            _ = try #require(try await outbox.claim(at: Self.now, lease: 3600) { _ in 50 })
            try await outbox.releaseOrphanedClaims()
            let again = try await outbox.claim(at: Self.now, lease: 3600) { _ in 50 }
            switch backend {
            case .sqlite:
                let uncertain = again?.listens.allSatisfy(\.uncertain) ?? false
                #expect(again?.listens.count == 2 && uncertain)
            case .postgres:
                #expect(again == nil)
            }
        }
    }
}
