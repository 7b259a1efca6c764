import Foundation
import PostgresNIO
import PostgresStore
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// The stores' one contract, run against every implementation: SQLite (the
/// embedded default) and PostgreSQL (a fresh database per test in the
/// cluster `scripts/test` starts, named by `VINYLOGUE_TEST_DATABASE_URL`).
@Suite struct StoreContractTests {
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    struct Stores: Sendable {
        let lists: any ListStore
        let accounts: any AccountStore
        let scrobbles: any ScrobbleArchive
        let listenTokens: any ListenTokenStore
        let mobileSessions: any MobileSessionStore
        let received: any ReceivedListenStore
        let outbox: any ForwardingOutbox
        let historyCopies: any HistoryCopyStore
        let importJobs: any ImportJobStore
        let jobs: any JobQueue
        let digests: any DigestStore
        let musicServers: any MusicServerSettings
        /// Makes every insert into the outbox fail from now on.
        let breakOutbox: @Sendable () async throws -> Void
        /// The database behind them, for tests that look at its tables.
        var sqlite: ArchiveDatabase? = nil
        var postgres: PostgresStore.PostgresDatabase? = nil
    }

    /// Fresh, empty stores on `backend` for the duration of `body`.
    static func withStores(_ backend: Backend, _ body: @Sendable (Stores) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let database = try ArchiveDatabase(directory: directory)
            try await body(Stores(lists: SQLiteListStore(database), accounts: SQLiteAccountStore(database),
                                  scrobbles: SQLiteScrobbleStore(database: database), listenTokens: SQLiteListenTokenStore(database),
                                  mobileSessions: SQLiteMobileSessionStore(database), received: SQLiteReceivedListenStore(database),
                                  outbox: SQLiteForwardingOutbox(database), historyCopies: SQLiteHistoryCopyStore(database),
                                  importJobs: SQLiteImportJobStore(database), jobs: SQLiteJobQueue(database), digests: SQLiteDigestStore(database),
                                  musicServers: SQLiteMusicServers(database), breakOutbox: {
                                      try await database.writer.write { db in
                                          try db.execute(sql: "CREATE TRIGGER broken BEFORE INSERT ON forward_outbox BEGIN SELECT RAISE(FAIL, 'the outbox is broken'); END")
                                      }
                                  }, sqlite: database))
        case .postgres:
            try await withFreshPostgres { url in
                try await PostgresDatabase.with(url: url) { database in
                    try await body(Stores(lists: PostgresListStore(database), accounts: PostgresAccountStore(database),
                                      scrobbles: PostgresScrobbleStore(database), listenTokens: PostgresListenTokenStore(database),
                                      mobileSessions: PostgresMobileSessionStore(database), received: PostgresReceivedListenStore(database),
                                      outbox: PostgresForwardingOutbox(database), historyCopies: PostgresHistoryCopyStore(database),
                                      importJobs: PostgresImportJobStore(database), jobs: PostgresJobQueue(database), digests: PostgresDigestStore(database),
                                      musicServers: PostgresMusicServers(database), breakOutbox: {
                                          try await database.client.query("ALTER TABLE forward_outbox ADD CONSTRAINT broken CHECK (false) NOT VALID")
                                      }, postgres: database))
                }
            }
        }
    }

    /// A new database in the test cluster, dropped afterwards.
    static func withFreshPostgres(_ body: @Sendable (String) async throws -> Void) async throws {
        let server = try TestCluster.url()
        try await PostgresDatabase.withTemporaryDatabase(server: server + "?sslmode=disable", body)
    }

    static func names(_ list: any ListStore) async throws -> [String] { try await list.users().map(\.name) }

    /// One listen token per owner, found by its digest; a new one replaces
    /// the old at once; an account's holder carries the account's name.
    @Test(arguments: Backend.allCases)
    func listenTokensAreOnePerOwnerFoundByDigest(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let tokens = stores.listenTokens
            let made = Date(timeIntervalSince1970: 1_700_000_000)
            #expect(try await tokens.holder(ofToken: "d1") == nil)
            #expect(try await tokens.tokenMade(by: .household) == nil)
            try await tokens.replaceToken(of: .household, digest: "d1", at: made)
            #expect(try await tokens.holder(ofToken: "d1") == ListenTokenHolder(owner: .household, accountName: nil))
            #expect(try await tokens.tokenMade(by: .household) == made)

            let (rj, _) = try await stores.accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: made)
            try await tokens.replaceToken(of: rj.owner, digest: "d2", at: made)
            #expect(try await tokens.holder(ofToken: "d2") == ListenTokenHolder(owner: rj.owner, accountName: try Username("RJ")))

            try await tokens.replaceToken(of: .household, digest: "d3", at: made.addingTimeInterval(60))
            #expect(try await tokens.holder(ofToken: "d1") == nil, "the old token stops at once")
            #expect(try await tokens.holder(ofToken: "d3")?.owner == .household)
            #expect(try await tokens.holder(ofToken: "d2")?.owner == rj.owner, "another owner's token is untouched")
            #expect(try await tokens.tokenMade(by: .household) == made.addingTimeInterval(60))
        }
    }

    /// Session keys of the `/2.0/` API: found by digest while their owner
    /// holds the token they were made with, stopped at once by a new token
    /// (another owner's untouched); a token's sealed verifier is found by
    /// owner and by account name, and replaced with the token.
    @Test(arguments: Backend.allCases)
    func mobileSessionsLastAsLongAsTheirToken(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let tokens = stores.listenTokens, sessions = stores.mobileSessions
            let made = Date(timeIntervalSince1970: 1_700_000_000)
            let (rj, _) = try await stores.accounts.signedIn(try Username("RJ"), lastFMSessionKey: "k", at: made)
            let (ybsc, _) = try await stores.accounts.signedIn(try Username("ybsc"), lastFMSessionKey: "k2", at: made)
            #expect(try await tokens.mobileVerifier(of: rj.owner) == nil)
            #expect(try await tokens.mobileVerifier(ofAccountNamed: try Username("rj")) == nil)
            try await tokens.replaceToken(of: rj.owner, digest: "t1", mobileVerifier: "sealed-1", at: made)
            try await tokens.replaceToken(of: ybsc.owner, digest: "y1", mobileVerifier: "sealed-y", at: made)
            try await tokens.replaceToken(of: .household, digest: "h1", at: made)
            let rjHolder = ListenTokenHolder(owner: rj.owner, accountName: try Username("RJ"))
            let verifier = MobileVerifier(holder: rjHolder, tokenDigest: "t1", sealed: "sealed-1")
            #expect(try await tokens.mobileVerifier(of: rj.owner) == verifier)
            #expect(try await tokens.mobileVerifier(ofAccountNamed: try Username("rj")) == verifier, "names in any case")
            #expect(try await tokens.mobileVerifier(of: .household)?.sealed == nil)
            #expect(try await tokens.mobileVerifier(ofAccountNamed: try Username("nobody")) == nil)

            #expect(try await sessions.holder(ofSession: "s1") == nil)
            try await sessions.startSession(digest: "s1", owner: rj.owner, tokenDigest: "t1", at: made)
            try await sessions.startSession(digest: "s2", owner: rj.owner, tokenDigest: "t1", at: made)
            try await sessions.startSession(digest: "y", owner: ybsc.owner, tokenDigest: "y1", at: made)
            try await sessions.startSession(digest: "h", owner: .household, tokenDigest: "h1", at: made)
            #expect(try await sessions.holder(ofSession: "s1") == rjHolder)
            #expect(try await sessions.holder(ofSession: "s2") == rjHolder)
            #expect(try await sessions.holder(ofSession: "h") == ListenTokenHolder(owner: .household, accountName: nil))
            #expect(try await sessions.sessionCount(of: rj.owner) == 2)

            try await tokens.replaceToken(of: rj.owner, digest: "t2", mobileVerifier: "sealed-2", at: made.addingTimeInterval(60))
            #expect(try await sessions.holder(ofSession: "s1") == nil, "a new token stops the old token's sessions at once")
            #expect(try await sessions.holder(ofSession: "s2") == nil)
            #expect(try await sessions.sessionCount(of: rj.owner) == 0, "and drops them")
            #expect(try await sessions.holder(ofSession: "y")?.owner == ybsc.owner, "another account's session is untouched")
            #expect(try await sessions.holder(ofSession: "h")?.owner == .household)
            #expect(try await tokens.mobileVerifier(of: rj.owner)?.sealed == "sealed-2")

            // A session made with a token that is no longer the owner's never works.
            try await sessions.startSession(digest: "late", owner: rj.owner, tokenDigest: "t1", at: made)
            #expect(try await sessions.holder(ofSession: "late") == nil)
            try await sessions.startSession(digest: "s3", owner: rj.owner, tokenDigest: "t2", at: made)
            #expect(try await sessions.holder(ofSession: "s3") == rjHolder)
            #expect(try await sessions.sessionCount(of: rj.owner) == 1, "starting a session drops the ones of older tokens")
        }
    }

    @Test(arguments: Backend.allCases)
    func aListKeepsItsOrderAndItsMe(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let list = stores.lists
            #expect(try await list.add(Username("ybsc")))
            #expect(try await !list.add(Username("YBSC")), "the same name in another case")
            #expect(try await list.addAll([Username("RJ"), Username("ybsc"), Username("demo")]).map(\.value) == ["RJ", "demo"])
            #expect(try await Self.names(list) == ["ybsc", "RJ", "demo"])
            #expect(try await list.users().filter(\.isMe).map(\.name) == ["ybsc"])
            #expect(try await list.user(Username("rj"))?.name == "RJ")

            try await list.move(Username("demo"), by: -1)
            #expect(try await Self.names(list) == ["ybsc", "demo", "RJ"])
            try await list.move(Username("ybsc"), by: -1)
            #expect(try await Self.names(list) == ["ybsc", "demo", "RJ"], "the first cannot move up")
            try await list.reorder([Username("RJ"), Username("nobody"), Username("RJ")])
            #expect(try await Self.names(list) == ["RJ", "ybsc", "demo"])
            #expect(try await list.users().map(\.position) == [0, 1, 2])

            #expect(try await list.rename(Username("ybsc"), to: Username("YBSC2")))
            #expect(try await Self.names(list) == ["RJ", "YBSC2", "demo"])
            #expect(try await !list.rename(Username("demo"), to: Username("rj")), "already listed")
            try await list.setMe(Username("demo"))
            #expect(try await list.users().filter(\.isMe).map(\.name) == ["demo"])
            try await list.remove(Username("demo"))
            #expect(try await list.users().filter(\.isMe).map(\.name) == ["RJ"], "the first remaining becomes me")
            #expect(try await list.users().map(\.position) == [0, 1])
        }
    }

    @Test(arguments: Backend.allCases)
    func ownersNeverSeeEachOthersListsOrSettings(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let household = stores.lists.owned(by: .household), first = stores.lists.owned(by: .account(1)),
                second = stores.lists.owned(by: .account(2))
            try await household.add(Username("ybsc"))
            try await first.add(Username("RJ"))
            try await second.add(Username("RJ"))
            try await second.add(Username("demo"))
            try await first.remove(Username("RJ"))
            #expect(try await Self.names(household) == ["ybsc"])
            #expect(try await Self.names(first).isEmpty)
            #expect(try await Self.names(second) == ["RJ", "demo"])
            #expect(first.owner == .account(1))

            #expect(try await first.settings() == Settings())
            try await first.save(Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
            try await second.save(Settings(filter: PlayCountFilter(threshold: 8)))
            #expect(try await first.settings() == Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
            #expect(try await second.settings() == Settings(filter: PlayCountFilter(threshold: 8)))
            #expect(try await household.settings() == Settings())
            try await first.save(Settings(filter: PlayCountFilter(threshold: 2)))
            #expect(try await first.settings().timeZoneIdentifier == nil, "no zone: the server's")
        }
    }

    @Test(arguments: Backend.allCases)
    func concurrentChangesToOneListKeepItDense(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let list = stores.lists.owned(by: .account(7))
            let names = try (0..<16).map { try Username("friend\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for name in names { group.addTask { try await list.add(name) } }
                try await group.waitForAll()
            }
            let users = try await list.users()
            #expect(users.count == 16)
            #expect(users.map(\.position) == Array(0..<16))
            #expect(users.filter(\.isMe).count == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func accountsAndSessions(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let accounts = stores.accounts
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            let (rj, isNew) = try await accounts.signedIn(Username("rj"), lastFMSessionKey: "key-1", at: now)
            #expect(isNew)
            let (again, newAgain) = try await accounts.signedIn(Username("RJ"), lastFMSessionKey: "key-2", at: now)
            #expect(!newAgain)
            #expect(again.id == rj.id)
            let (other, _) = try await accounts.signedIn(Username("ybsc"), lastFMSessionKey: "key-3", at: now)
            #expect(other.id != rj.id)
            #expect(try await accounts.accountCount() == 2)

            let day: TimeInterval = 86_400
            try await accounts.startSession(digest: "a", for: again, at: now, expires: now + 30 * day, replacing: nil)
            try await accounts.startSession(digest: "b", for: other, at: now, expires: now + day, replacing: nil)
            #expect(try await accounts.account(forSession: "a", at: now)?.name.value == "RJ", "the latest spelling")
            #expect(try await accounts.account(forSession: "b", at: now)?.id == other.id)
            #expect(try await accounts.account(forSession: "c", at: now) == nil)
            #expect(try await accounts.account(forSession: "b", at: now + day) == nil, "expired")

            // A new session replaces the browser's old one and clears expired ones.
            try await accounts.startSession(digest: "a2", for: again, at: now + 2 * day, expires: now + 32 * day, replacing: "a")
            #expect(try await accounts.account(forSession: "a", at: now + 2 * day) == nil)
            #expect(try await accounts.account(forSession: "a2", at: now + 2 * day)?.id == rj.id)
            #expect(try await accounts.sessionCount() == 1, "b expired and was cleared")
            try await accounts.endSession(digest: "a2")
            #expect(try await accounts.account(forSession: "a2", at: now + 2 * day) == nil)
            #expect(try await accounts.sessionCount() == 0)
        }
    }
}
