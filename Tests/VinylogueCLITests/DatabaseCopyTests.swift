import Archive
import Foundation
import PostgresStore
import Testing
import VinylogueCore

/// `vinylogue db copy` moves a home installation's SQLite data into
/// PostgreSQL, and can be run again with the same result.
@Suite struct DatabaseCopyTests {
    @Test func aHomeInstallationMovesToPostgreSQLAndACopyCanBeRepeated() async throws {
        guard let cluster = ProcessInfo.processInfo.environment["VINYLOGUE_TEST_DATABASE_URL"], !cluster.isEmpty else {
            Issue.record("VINYLOGUE_TEST_DATABASE_URL is not set: run the tests with scripts/test, which starts a PostgreSQL cluster for them")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A household's list and settings, an account with its list and a
        // session, and saved Last.fm answers.
        let database = try ArchiveDatabase(directory: directory)
        let household = SQLiteListStore(database)
        try await household.addAll([Username("ybsc"), Username("RJ")])
        try await household.save(Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let (account, _) = try await SQLiteAccountStore(database).signedIn(Username("RJ"), lastFMSessionKey: "sk", at: now)
        try await household.owned(by: account.owner).addAll([Username("RJ"), Username("demo")])
        try await SQLiteAccountStore(database).startSession(digest: "d1", for: account, at: now, expires: .distantFuture, replacing: nil)
        let cache = ResponseCacheTable(database)
        for n in 0..<1_200 { await cache.store(Data("{\"n\":\(n)}".utf8), for: "user.getinfo&user=u\(n)", at: now, expires: .distantFuture) }

        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
            for _ in 0..<2 {
                let run = try await vinylogue(["db", "copy", "--from", directory.path, "--to", url])
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stdout.contains("  list entries: 4\n"), "\(run.stdout)")
                #expect(run.stdout.contains("  saved Last.fm answers: 1200\n"))
                #expect(run.stdout.contains("Counts checked"))
            }
            try await PostgresDatabase.with(url: url) { postgres in
                let lists = PostgresListStore(postgres)
                #expect(try await lists.users().map(\.name) == ["ybsc", "RJ"])
                #expect(try await lists.settings() == Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
                #expect(try await lists.owned(by: account.owner).users().map(\.name) == ["RJ", "demo"])
                let accounts = PostgresAccountStore(postgres)
                #expect(try await accounts.account(forSession: "d1", at: now)?.name.value == "RJ")
                // A new account after the copy does not take a copied id.
                let (next, isNew) = try await accounts.signedIn(Username("ybsc"), lastFMSessionKey: "sk2", at: now)
                #expect(isNew && next.id > account.id)
                let saved = PostgresResponseCache(postgres, coordination: postgres, clock: .fixed(now))
                #expect(await saved.lookup("user.getinfo&user=u1199")?.body == Data("{\"n\":1199}".utf8))
            }
        }
    }

    @Test func aDirectoryWithoutDataIsSaidSo() async throws {
        let run = try await vinylogue(["db", "copy", "--from", "/nonexistent/vinylogue", "--to", "postgres://u@127.0.0.1:1/x"])
        #expect(run.status == 4)
        #expect(run.stderr.contains("There is no Vinylogue data in /nonexistent/vinylogue. Give the directory serve uses (its --data-dir) with --from."))
    }
}
