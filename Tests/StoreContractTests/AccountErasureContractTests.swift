import Foundation
import GRDB
import PostgresNIO
import Testing
import TestSupport
import VinylogueCore
@testable import PostgresStore
@testable import SQLiteStore
@testable import Stores

/// "Delete my account" (`AccountEraser`): an account with rows in every
/// table is erased, and then no table of the store holds its id or its
/// name, while the other people's rows are as they were.
@Suite struct AccountErasureContractTests {
    typealias Backend = StoreContractTests.Backend
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    /// Every value of every row of every table, as text, with its table
    /// and column: what the scan looks through.
    typealias Dump = @Sendable () async throws -> [(table: String, column: String, value: String)]

    @Test(arguments: Backend.allCases)
    func anErasedAccountLeavesNothingInAnyTable(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores, eraser, cache, dump in
            let zeb = try Username("Zebulon42"), ybsc = try Username("ybsc")
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.at)
            let (other, _) = try await stores.accounts.signedIn(ybsc, lastFMSessionKey: "sk-ybsc", at: Self.at)
            // Every table: sessions, tokens, lists, settings, forwarding,
            // the outbox, uploads, copies, the archive, saved answers.
            try await stores.accounts.startSession(digest: "zeb-session", for: account, at: Self.at, expires: .distantFuture, replacing: nil)
            try await stores.listenTokens.replaceToken(of: account.owner, digest: "zeb-token", mobileVerifier: "zeb-verifier", at: Self.at)
            try await stores.mobileSessions.startSession(digest: "zeb-mobile", owner: account.owner, tokenDigest: "zeb-token", at: Self.at)
            let mine = stores.lists.owned(by: account.owner)
            _ = try await mine.addAll([zeb, ybsc])
            try await mine.save(Settings(filter: PlayCountFilter(threshold: 2), timeZoneIdentifier: "Europe/Oslo"))
            // On the household's list as "me", and on ybsc's list second.
            _ = try await stores.lists.addAll([zeb, ybsc, try Username("RJ")])
            _ = try await stores.lists.owned(by: other.owner).addAll([ybsc, zeb, try Username("RJ")])
            try await stores.outbox.setForwardsToLastFM(true, for: account.owner, at: Self.at)
            try await stores.outbox.setListenBrainz(token: "zeb-lb-token", user: "zeb-lb", for: account.owner, at: Self.at)
            try await stores.musicServers.setMusicServer(MusicServerSetting(kind: .subsonic, address: "http://zeb-nas.local:4533", username: "zebulon42",
                                                                            password: "zeb-music-password"), of: account.owner, at: Self.at)
            let listen = Scrobble(instant: 1_699_990_000, artist: "Low", album: "HEY WHAT", track: "White Horses")
            _ = try await stores.outbox.enqueue([ListenToForward(scrobble: listen, duration: 200)], of: account.owner, to: [.lastFM], at: Self.at)
            _ = try await stores.importJobs.queue(owner: account.owner, user: zeb, fileName: "zeb.csv", path: "/uploads/zeb-upload.csv",
                                                  bytes: 10, machine: "m", at: Self.at)
            _ = try await stores.historyCopies.queue(zeb, at: Self.at)
            _ = try await stores.scrobbles.store([listen], of: zeb, origin: .received)
            // The same play from Last.fm a few seconds later: set aside.
            _ = try await stores.scrobbles.store([Scrobble(instant: 1_699_990_004, artist: "Low", album: "HEY WHAT (Deluxe)", track: "White Horses")],
                                                 of: zeb, origin: .sync(of: zeb))
            try await stores.scrobbles.beginSync(SyncState(fromInstant: 0, toInstant: 1_700_000_000, nextPage: 2, totalPages: 3, pageSize: 200), of: zeb)
            _ = try await stores.scrobbles.store([listen], of: ybsc, origin: .received)
            await cache.store(Data("zeb's chart".utf8), for: "user.getweeklyalbumchart&from=1&to=2&user=zebulon42", .distantFuture)
            await cache.store(Data("ybsc's chart".utf8), for: "user.getweeklyalbumchart&from=1&to=2&user=ybsc", .distantFuture)
            #expect(try await stores.scrobbles.chooseAlbumFolding(.asSpelled, of: zeb, at: Self.at))
            let before = try await dump()
            let filled = Set(before.map(\.table))
            for table in ["account", "web_session", "mobile_session", "listen_token", "list_entry", "owner_setting", "forwarding", "forward_outbox", "music_server",
                          "import_job", "history_copy", "archive_user", "scrobble", "scrobble_echo", "weekly_chart", "sync_state", "album_folding"] {
                #expect(filled.contains(table), "nothing in \(table) before the erasure")
            }

            let erased = try await eraser.erase(account)
            #expect(erased.uploads == ["/uploads/zeb-upload.csv"])
            #expect(Set(erased.listedBy) == [.household, other.owner])

            let after = try await dump()
            let named = after.filter { $0.value.lowercased().contains("zebulon42") || $0.value.contains("zeb-") }
            #expect(named.isEmpty, "\(named)")
            let byID = after.filter { ["owner", "account_id"].contains($0.column) && $0.value == String(account.id) }
            #expect(byID.isEmpty, "\(byID)")
            #expect(!after.contains { $0.table == "account" && $0.column == "id" && $0.value == String(account.id) })
            // The others' lists closed up; the household's "me" passed on.
            #expect(try await stores.lists.users().map { [$0.name, "\($0.position)", "\($0.isMe)"] } == [["ybsc", "0", "true"], ["RJ", "1", "false"]])
            #expect(try await stores.lists.owned(by: other.owner).users().map { [$0.name, "\($0.position)"] } == [["ybsc", "0"], ["RJ", "1"]])
            // ybsc's own rows are as they were.
            #expect(try await stores.scrobbles.scrobbleCount(of: ybsc) == 1)
            #expect(after.contains { $0.value.contains("ybsc's chart") || $0.value.contains("user=ybsc") })
            #expect(try await stores.accounts.accountCount() == 1)
        }
    }

    /// Fresh stores on `backend` with their eraser, saved-answer cache and a
    /// dump of every table.
    static func withStores(_ backend: Backend,
                           _ body: @Sendable (StoreContractTests.Stores, any AccountEraser, Cache, Dump) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            try await StoreContractTests.withStores(backend) { stores in
                let database = try #require(stores.sqlite)
                let cache = SQLiteResponseCache(database, clock: .fixed(Self.at))
                try await body(stores, SQLiteAccountEraser(database), Cache { await cache.store($0, for: $1, expires: $2) }) {
                    try await database.writer.read { db in
                        var values: [(String, String, String)] = []
                        for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                            for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                                for (column, value) in row {
                                    let text: String = switch value.storage {
                                    case .null: ""
                                    case .int64(let n): String(n)
                                    case .double(let d): String(d)
                                    case .string(let s): s
                                    case .blob(let b): String(decoding: b, as: UTF8.self)
                                    }
                                    values.append((table, column, text))
                                }
                            }
                        }
                        return values
                    }
                }
            }
        case .postgres:
            try await StoreContractTests.withStores(backend) { stores in
                let database = try #require(stores.postgres)
                let cache = PostgresResponseCache(database, coordination: database, clock: .fixed(Self.at))
                try await body(stores, PostgresAccountEraser(database), Cache { await cache.store($0, for: $1, expires: $2) }) {
                    var columns: [(String, String, String)] = []
                    for try await (table, column, type) in try await database.client.query("""
                        SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
                        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
                        """).decode((String, String, String).self) { columns.append((table, column, type)) }
                    var values: [(String, String, String)] = []
                    for (table, column, type) in columns {
                        let text = type == "bytea" ? "encode(\"\(column)\", 'escape')" : "\"\(column)\"::text"
                        let query = PostgresQuery(unsafeSQL: "SELECT coalesce(\(text), '') FROM \"\(table)\"")
                        for try await value in try await database.client.query(query).decode(String.self) { values.append((table, column, value)) }
                    }
                    return values
                }
            }
        }
    }

    /// Saves a Last.fm answer the way the server does.
    struct Cache: Sendable {
        let save: @Sendable (Data, String, Date) async -> Void
        func store(_ body: Data, for key: String, _ expires: Date) async { await save(body, key, expires) }
    }
}
