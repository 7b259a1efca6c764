import Artwork
import Foundation
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
import Sync
@testable import Stores

/// `ArchiveCoverFetch` with a scripted Last.fm and image host: what it
/// counts, what it tries again, and when it gives up.
@Suite struct ArchiveCoverFetchTests {
    /// Album details by name; albums not listed are "not found", and
    /// `failing` makes every call fail as the network would.
    final class ScriptedAlbums: AlbumSource, Sendable {
        let failing: SourceError?
        let calls = Atomic<Int>(0)
        init(failing: SourceError? = nil) { self.failing = failing }

        func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
            calls.add(1, ordering: .relaxed)
            if let failing { throw failing }
            guard name != "Unknown" else { throw .notFound(what: "The album") }
            let hash = NameHash(artist + "|" + name).hex
            return AlbumDetail(artist: artist, name: name, mbid: mbid, url: nil,
                               images: [.extralarge: "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png"], summary: nil,
                               listeners: 0, playCount: 0, userPlayCount: nil, tags: [], tracks: [])
        }
    }

    static func archive(_ albums: [String], in directory: URL) async throws -> ArchiveDatabase {
        let database = try ArchiveDatabase(directory: directory)
        let scrobbles = albums.enumerated().flatMap { n, album in
            // More plays for earlier albums: the order they are asked in.
            (0...(albums.count - n)).map { k in
                Scrobble(instant: 1_600_000_000 + Int64(n * 100 + k) * 600, artist: "Artist", album: album, track: "T\(k)")
            }
        }
        try await SQLiteScrobbleStore(database: database).store(scrobbles, of: Username("fetcher"), origin: .lastFMExport)
        return database
    }

    @Test func aResetImageRequestIsTriedOnceMoreAndNotFoundMeansNoCover() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cover-fetch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await Self.archive(["One", "Two", "Unknown"], in: directory)
        let png = try GeneratedCover(artist: "a", album: "b").pngData()
        let attempts = Mutex<[String: Int]>([:])
        // Every image fails once (a connection reset), then arrives.
        let upstream = ArtworkUpstream { url in
            let n = attempts.withLock { $0[url, default: 0] += 1; return $0[url]! }
            if n == 1 { throw ArtworkError.unreachable("connection reset by peer") }
            return (200, png)
        }
        let albums = ScriptedAlbums()
        let fetch = ArchiveCoverFetch(covers: AlbumCovers(store: SQLiteAlbumCoverStore(database), albums: albums, clock: .system),
                                      artwork: ArtworkStore(dataDirectory: directory, upstream: upstream), concurrency: 2)
        let summary = try await fetch.run(for: Username("fetcher"))
        #expect(summary.albums == 3 && summary.found == 2 && summary.noCover == 1 && summary.keptImages == 2)
        #expect(summary.failures.isEmpty, "\(summary.failures)")
        #expect(attempts.withLock { $0.values.sorted() } == [2, 2])
        #expect(try await SQLiteAlbumCoverStore(database).answer(artist: "artist", name: "unknown") == .noCover)

        let again = try await fetch.run(for: Username("fetcher"))
        #expect(again.alreadyDone == 3 && again.found == 0 && again.keptImages == 0)
        #expect(albums.calls.load(ordering: .relaxed) == 3, "nothing asked twice")
    }

    @Test func fiveFailuresOfTheMomentInARowStopTheRun() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cover-fetch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await Self.archive((1...8).map { "Album \($0)" }, in: directory)
        let albums = ScriptedAlbums(failing: .transport(detail: "connection refused"))
        let fetch = ArchiveCoverFetch(covers: AlbumCovers(store: SQLiteAlbumCoverStore(database), albums: albums, clock: .system),
                                      artwork: ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in (404, Data()) }),
                                      concurrency: 1)
        let summary = try await fetch.run(for: Username("fetcher"))
        #expect(summary.gaveUp == .transport(detail: "connection refused"))
        #expect(summary.failures.count == 5 && summary.notAttempted == 3)
        #expect(summary.failures.first?.reason == "Could not reach Last.fm (connection refused).")
        #expect(try await SQLiteAlbumCoverStore(database).answers(for: [AlbumKey(artist: "Artist", album: "Album 1")]).isEmpty)
    }

    @Test func aMissingKeyStopsAtOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cover-fetch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await Self.archive((1...8).map { "Album \($0)" }, in: directory)
        let albums = ScriptedAlbums(failing: .missingAPIKey)
        let fetch = ArchiveCoverFetch(covers: AlbumCovers(store: SQLiteAlbumCoverStore(database), albums: albums, clock: .system),
                                      artwork: ArtworkStore(dataDirectory: directory, upstream: ArtworkUpstream { _ in (404, Data()) }),
                                      concurrency: 1)
        await #expect(throws: SourceError.missingAPIKey) { try await fetch.run(for: Username("fetcher")) }
        #expect(albums.calls.load(ordering: .relaxed) == 1)
    }
}
