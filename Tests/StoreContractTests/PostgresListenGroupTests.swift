import Foundation
import Logging
import PostgresNIO
import Testing
import VinylogueCore
@testable import PostgresStore
@testable import Stores

/// Listens sent at the same moment are kept in shared groups on
/// PostgreSQL (`PostgresListenGroups`): one transaction, one statement per
/// step for the whole group, and still each caller hears only about its
/// own listens.
@Suite struct PostgresListenGroupTests {
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    static func listen(_ instant: Int64, artist: String = "Low", track: String = "Plastic Cup") -> ListenToForward {
        ListenToForward(scrobble: Scrobble(instant: instant, artist: artist, album: "The Invisible Way", track: track), duration: 200)
    }

    /// `body` gets a database and groups that write one at a time, whose
    /// first group waits on `blocker`'s lock, held by the test on its own
    /// connection until `release` is called: the keeps sent meanwhile wait
    /// together for the next group.
    static func withHeldGroups(_ body: @Sendable (PostgresStore.PostgresDatabase, PostgresListenGroups, _ release: @Sendable () async throws -> Void)
                                   async throws -> Void) async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresStore.PostgresDatabase.with(url: url) { database in
                let groups = PostgresListenGroups(client: database.client, logger: database.logger, groupsAtOnce: 1)
                let blocker = try Username("blocker")
                let store = PostgresScrobbleStore(database)
                _ = try await store.store([Scrobble(instant: 1_600_000_000, artist: "A", album: "B", track: "C")], of: blocker, origin: .received)
                try await database.client.withConnection { held in
                    let id = try await database.client.withConnection { try await PostgresScrobbleStore.userID(of: blocker, $0, database.logger) }!
                    try await held.query("SELECT pg_advisory_lock(\(PostgresScrobbleStore.lockKey(id)))", logger: database.logger)
                    let first = Task {
                        try await groups.keep([Self.listen(1_699_000_000)], from: .known(ListenSender(user: blocker, owner: .household)),
                                              forwardingAmong: [], at: Self.at)
                    }
                    // Taken alone as the first group, which now waits on the lock.
                    await groups.wait { $0.groupsTaken == 1 }
                    try await body(database, groups) {
                        try await held.query("SELECT pg_advisory_unlock(\(PostgresScrobbleStore.lockKey(id)))", logger: database.logger)
                    }
                    #expect(try await first.value != nil)
                }
            }
        }
    }

    @Test func keepsThatWaitTogetherAreOneGroupAndEachHearsItsOwn() async throws {
        try await Self.withHeldGroups { database, groups, release in
            let people = try (0..<12).map { try Username("person\($0)") }
            try await PostgresForwardingOutbox(database).setListenBrainz(token: "lb", user: "lb-user", for: .household, at: Self.at)
            let kept = Task {
                try await withThrowingTaskGroup(of: (Int, KeptListens?).self) { tasks in
                    for (n, person) in people.enumerated() {
                        // Person 0 twice: two requests of one person in one group.
                        for sender in n == 0 ? [person, person] : [person] {
                            tasks.addTask {
                                (n, try await groups.keep([Self.listen(1_699_990_000 + Int64(n)), Self.listen(1_699_990_100 + Int64(n), track: "Holy Ghost")],
                                                          from: .known(ListenSender(user: sender, owner: .household)),
                                                          forwardingAmong: [.listenBrainz], at: Self.at))
                            }
                        }
                    }
                    return try await tasks.reduce(into: [(Int, KeptListens?)]()) { $0.append($1) }
                }
            }
            await groups.wait { $0.waiting == 13 }
            try await release()
            let answers = try await kept.value
            #expect(groups.largestGroup == 13)
            // Person 0's second request repeated both listens: kept and queued once.
            #expect(answers.map { $0.1?.queued ?? -1 }.reduce(0, +) == 24)
            #expect(answers.filter { $0.0 == 0 }.map { $0.1?.queued ?? -1 }.sorted() == [0, 2])
            // One forwarding job for the owner and service, queued with the group.
            let forwardingJobs = try await PostgresJobQueue(database).jobs(of: .forwarding, key: "0/2")
            #expect(forwardingJobs.map(\.state) == [.queued] && forwardingJobs.first?.person == "")
            let archive = PostgresScrobbleStore(database)
            let week = LastFMWeekCalendar.week(containing: 1_699_990_000)
            for person in people {
                #expect(try await archive.scrobbleCount(of: person) == 2)
                #expect(try await archive.charts(.album, of: person, weeks: [week])?.first?.entries.first?.plays == 2)
            }
            #expect(try await PostgresForwardingOutbox(database).states(of: .household)[.listenBrainz]?.waiting == 24)
        }
    }

    /// A keep PostgreSQL cannot store (an artist far past what its index
    /// takes) fails its own caller only: its group is written again, each
    /// keep alone, and the others are stored.
    @Test func aKeepThatCannotBeStoredFailsAloneInItsGroup() async throws {
        try await Self.withHeldGroups { database, groups, release in
            let people = try (0..<6).map { try Username("person\($0)") }
            let results = Task {
                await withTaskGroup(of: (Int, Bool).self) { tasks in
                    for (n, person) in people.enumerated() {
                        tasks.addTask {
                            // Random enough not to compress below the index's limit.
                            let artist = n == 3 ? (0..<400).map { _ in UUID().uuidString }.joined() : "Low"
                            let kept = try? await groups.keep([Self.listen(1_699_990_000, artist: artist)],
                                                              from: .known(ListenSender(user: person, owner: .household)),
                                                              forwardingAmong: [], at: Self.at)
                            return (n, kept != nil)
                        }
                    }
                    return await tasks.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
                }
            }
            await groups.wait { $0.waiting == 6 }
            try await release()
            let stored = await results.value
            #expect(stored == [0: true, 1: true, 2: true, 3: false, 4: true, 5: true])
            #expect(groups.largestGroup == 6)
            let archive = PostgresScrobbleStore(database)
            for (n, person) in people.enumerated() { #expect(try await archive.scrobbleCount(of: person) == (n == 3 ? 0 : 1)) }
        }
    }

    /// A token replaced before its group commits keeps nothing, while the
    /// others in the group are kept.
    @Test func aReplacedTokenInAGroupKeepsNothing() async throws {
        try await Self.withHeldGroups { database, groups, release in
            let tokens = PostgresListenTokenStore(database)
            try await tokens.replaceToken(of: .household, digest: "new", at: Self.at)
            let user = try Username("listener")
            let sender: @Sendable (ListenTokenHolder?) -> ListenSender? = { $0.map { ListenSender(user: user, owner: $0.owner) } }
            let answers = Task {
                try await withThrowingTaskGroup(of: (String, KeptListens?).self) { tasks in
                    for (digest, instant) in [("old", Int64(1_699_990_000)), ("new", 1_699_990_300)] {
                        tasks.addTask {
                            (digest, try await groups.keep([Self.listen(instant)], from: .token(digest: digest, sender: sender),
                                                           forwardingAmong: [], at: Self.at))
                        }
                    }
                    return try await tasks.reduce(into: [String: KeptListens?]()) { $0[$1.0] = $1.1 }
                }
            }
            await groups.wait { $0.waiting == 2 }
            try await release()
            let kept = try await answers.value
            #expect(kept["old"] == .some(nil))
            #expect(kept["new"] == KeptListens(sender: ListenSender(user: user, owner: .household), queued: 0))
            #expect(try await PostgresScrobbleStore(database).scrobbleCount(of: user) == 1)
        }
    }

    /// The fleet's instances hear whose listens were kept from the keep's
    /// own transaction (before, each listen was announced afterwards in a
    /// transaction of its own, lost if the process died in between).
    @Test(.timeLimit(.minutes(1))) func keptListensAreAnnouncedToTheFleetAsTheyCommit() async throws {
        try await StoreContractTests.withFreshPostgres { url in
            try await PostgresStore.PostgresDatabase.with(url: url) { database in
                try await database.client.withConnection { connection in
                    let notifications = try await connection.listen(PostgresFleetNotices.channel)
                    let user = try Username("Announced")
                    _ = try await PostgresReceivedListenStore(database).keep([Self.listen(1_699_990_000)], of: user, owner: .household,
                                                                             forwardingAmong: [], at: Self.at)
                    for try await notification in notifications {
                        let notice = try JSONDecoder().decode(FleetNotice.self, from: Data(notification.payload.utf8))
                        #expect(notice == .listensChanged(user: "Announced"))
                        break
                    }
                }
            }
        }
    }
}
