import Artwork
import Foundation
import PostgresNIO
import PostgresStore
import Testing
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// Remembered album covers (`AlbumCoverStore`), one contract for SQLite
/// and PostgreSQL: answers by album, "no cover" included, every spelling
/// of an album sharing one answer, hostile names kept exactly, a stored
/// address that is not one ignored, and an archive's albums most played first.
@Suite struct AlbumCoverContractTests {
    typealias Backend = StoreContractTests.Backend

    struct Stores: Sendable {
        let covers: any AlbumCoverStore
        let scrobbles: any ScrobbleArchive
        /// Writes a row by hand, as a damaged or hostile database might hold.
        let writeRaw: @Sendable (_ artistKey: String, _ albumKey: String, _ address: String) async throws -> Void
    }

    static func withStores(_ backend: Backend, _ body: @Sendable (Stores) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("covers-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let database = try ArchiveDatabase(directory: directory)
            try await body(Stores(covers: SQLiteAlbumCoverStore(database), scrobbles: SQLiteScrobbleStore(database: database)) { a, b, path in
                try await database.writer.write { db in
                    try db.execute(sql: "INSERT INTO album_cover VALUES (?, ?, ?, ?, ?, 0)", arguments: [a, b, a, b, path])
                }
            })
        case .postgres:
            try await StoreContractTests.withFreshPostgres { url in
                try await PostgresDatabase.with(url: url) { database in
                    try await body(Stores(covers: PostgresAlbumCoverStore(database), scrobbles: PostgresScrobbleStore(database)) { a, b, path in
                        try await database.client.query("INSERT INTO album_cover VALUES (\(a), \(b), \(a), \(b), \(path), now())")
                    })
                }
            }
        }
    }

    static let cover = ArtworkAddress(size: .extraLarge, hash: "0123456789abcdef0123456789abcdef", ext: .png)!
    static let other = ArtworkAddress(size: .extraLarge, hash: "fedcba9876543210fedcba9876543210", ext: .jpg)!
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: Backend.allCases)
    func answersAreRememberedPerAlbumWhateverTheSpelling(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let covers = stores.covers
            #expect(try await covers.answer(artist: "AC/DC", name: "Back in Black") == nil, "never asked")
            try await covers.remember(.cover(Self.cover), artist: "AC/DC", name: "Back in Black", at: Self.now)
            try await covers.remember(.noCover, artist: "Sigur Rós", name: "( )", at: Self.now)
            #expect(try await covers.answer(artist: "ac/dc", name: "BACK IN BLACK") == .cover(Self.cover))
            #expect(try await covers.answer(artist: "SIGUR RÓS", name: "( )") == .noCover, "Unicode case, not ASCII")
            // A later answer replaces the earlier one.
            try await covers.remember(.cover(Self.other), artist: "Sigur Rós", name: "( )", at: Self.now + 60)
            #expect(try await covers.answer(artist: "Sigur Rós", name: "( )") == .cover(Self.other))
            let keys = [AlbumKey(artist: "AC/DC", album: "Back in Black"), AlbumKey(artist: "sigur rós", album: "( )"),
                        AlbumKey(artist: "Nobody", album: "Nothing")]
            #expect(try await covers.answers(for: keys) == [keys[0]: .cover(Self.cover), keys[1]: .cover(Self.other)])
            #expect(try await covers.answers(for: []).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func hostileNamesAreKeptExactly(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let names: [(String, String)] = [
                ("Björk \"quoted\" 'single'", "Homogenic / 🎵 \\ %2F'; DROP TABLE album_cover; --"),
                ("../../etc", "passwd"), ("🦆", "🦆🦆"), ("A", "a/b/c?d=e#f"), ("  spaced  ", "\t"),
            ]
            for (n, (artist, album)) in names.enumerated() {
                try await stores.covers.remember(n.isMultiple(of: 2) ? .cover(Self.cover) : .noCover, artist: artist, name: album, at: Self.now)
            }
            for (n, (artist, album)) in names.enumerated() {
                #expect(try await stores.covers.answer(artist: artist.uppercased(), name: album) == (n.isMultiple(of: 2) ? .cover(Self.cover) : .noCover),
                        "\(artist) – \(album)")
            }
            #expect(try await stores.covers.answer(artist: "🦆", name: "🦆") == nil)
        }
    }

    /// Only an `ArtworkAddress` ever comes out: a row holding any other
    /// URL counts as never asked, so nothing can make the server fetch it.
    @Test(arguments: Backend.allCases)
    func aStoredAddressThatIsNotOneIsIgnored(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            try await stores.writeRaw("evil", "one", "http://169.254.169.254/latest/meta-data")
            try await stores.writeRaw("evil", "two", "/art/300x300/../../etc/passwd.png")
            #expect(try await stores.covers.answers(for: [AlbumKey(artist: "evil", album: "one"), AlbumKey(artist: "evil", album: "two")]).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func anArchivesAlbumsComeMostPlayedFirst(_ backend: Backend) async throws {
        try await Self.withStores(backend) { stores in
            let user = try Username("Collector")
            #expect(try await stores.covers.archivedAlbums(of: user).isEmpty)
            let t: Int64 = 1_600_000_000
            var scrobbles: [Scrobble] = []
            func play(_ n: Int, _ artist: String, _ album: String, mbid: String? = nil) {
                for _ in 0..<n {
                    scrobbles.append(Scrobble(instant: t + Int64(scrobbles.count) * 600, artist: artist, album: album,
                                              track: "T\(scrobbles.count)", albumMBID: mbid))
                }
            }
            play(3, "Björk", "Homogenic")
            play(2, "BJÖRK", "HOMOGENIC", mbid: "2c0f2b6d-0000-4000-8000-000000000001")
            play(4, "AC/DC", "Back in Black")
            play(1, "Loose", "")  // no album: not an album
            play(2, "🦆", "Quack \"Live\" / 2020")
            _ = try await stores.scrobbles.store(scrobbles, of: user, origin: .lastFMExport)
            let albums = try await stores.covers.archivedAlbums(of: Username("collector"))
            #expect(albums == [
                ArchivedAlbum(artist: "Björk", name: "Homogenic", mbid: "2c0f2b6d-0000-4000-8000-000000000001", plays: 5),
                ArchivedAlbum(artist: "AC/DC", name: "Back in Black", mbid: nil, plays: 4),
                ArchivedAlbum(artist: "🦆", name: "Quack \"Live\" / 2020", mbid: nil, plays: 2),
            ])
            #expect(try await stores.covers.archivedAlbums(of: Username("someoneelse")).isEmpty)
        }
    }
}
